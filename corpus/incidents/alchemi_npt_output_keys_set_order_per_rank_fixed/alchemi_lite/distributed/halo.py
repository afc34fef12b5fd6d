"""Particle halos for a slab decomposition along x (nvalchemi/distributed/_core/particle_halo.py and
gather_primitives.py): each rank owns the atoms of its slab and carries read-only copies (halo) of
the atoms within the cutoff of its slab faces; partial per-atom results computed on halo copies are
routed back to their owners with an all-to-all."""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

import torch
import torch.distributed as dist


@dataclass
class ParticleHaloConfig:
    cutoff: float
    group: Optional[dist.ProcessGroup] = None

    @property
    def world_size(self) -> int:
        return dist.get_world_size(self.group)

    @property
    def rank(self) -> int:
        return dist.get_rank(self.group)


@dataclass
class ParticleHaloMetadata:
    owned_ids: torch.Tensor          # global ids of the atoms this rank owns
    halo_ids: torch.Tensor           # global ids of the halo copies, grouped by owner rank
    halo_owner_counts: List[int]     # how many halo copies belong to each rank
    recv_counts: List[int]           # how many of my owned atoms each rank holds as halo
    recv_local_index: torch.Tensor   # local (owned) index of each atom received in the reverse exchange

    @property
    def n_owned(self) -> int:
        return int(self.owned_ids.numel())

    @property
    def n_padded(self) -> int:
        return int(self.owned_ids.numel() + self.halo_ids.numel())


def slab_owner(positions: torch.Tensor, cell: torch.Tensor, world_size: int) -> torch.Tensor:
    frac_x = torch.remainder(positions[:, 0] / cell[0, 0], 1.0)
    return torch.clamp((frac_x * world_size).long(), max=world_size - 1)


def build_halo_metadata(positions: torch.Tensor, cell: torch.Tensor, config: ParticleHaloConfig
                        ) -> ParticleHaloMetadata:
    """Every rank holds the replicated positions, so the metadata is computed locally and agrees
    across ranks; no communication is needed here."""
    world_size, rank = config.world_size, config.rank
    owner = slab_owner(positions, cell, world_size)
    lx = cell[0, 0] / world_size
    x = torch.remainder(positions[:, 0], cell[0, 0])

    def halo_of(r: int) -> torch.Tensor:
        lo, hi = r * lx, (r + 1) * lx
        dist_lo = torch.minimum(torch.remainder(lo - x, cell[0, 0]), torch.remainder(x - lo, cell[0, 0]))
        dist_hi = torch.minimum(torch.remainder(hi - x, cell[0, 0]), torch.remainder(x - hi, cell[0, 0]))
        near = (dist_lo < config.cutoff) | (dist_hi < config.cutoff)
        return torch.nonzero(near & (owner != r), as_tuple=False).squeeze(1)

    owned_ids = torch.nonzero(owner == rank, as_tuple=False).squeeze(1)
    my_halo = halo_of(rank)
    halo_ids = torch.cat([my_halo[owner[my_halo] == r] for r in range(world_size)])
    halo_owner_counts = [int((owner[my_halo] == r).sum()) for r in range(world_size)]

    recv_counts, recv_global = [], []
    for r in range(world_size):
        theirs = halo_of(r)
        mine = theirs[owner[theirs] == rank] if r != rank else theirs[:0]
        recv_counts.append(int(mine.numel()))
        recv_global.append(mine)
    recv_global_t = torch.cat(recv_global)
    position_in_owned = torch.full((positions.size(0),), -1, dtype=torch.long, device=positions.device)
    position_in_owned[owned_ids] = torch.arange(owned_ids.numel(), device=positions.device)
    return ParticleHaloMetadata(owned_ids=owned_ids, halo_ids=halo_ids, halo_owner_counts=halo_owner_counts,
                                recv_counts=recv_counts, recv_local_index=position_in_owned[recv_global_t])


def halo_reverse_exchange(value: torch.Tensor, meta: ParticleHaloMetadata, config: ParticleHaloConfig
                          ) -> torch.Tensor:
    """Send the rows computed on halo copies to their owners and add them to the owned rows."""
    owned = value[: meta.n_owned].contiguous()
    send = value[meta.n_owned:].contiguous()
    recv = send.new_empty((sum(meta.recv_counts),) + tuple(value.shape[1:]))
    dist.all_to_all_single(recv, send, output_split_sizes=meta.recv_counts,
                           input_split_sizes=meta.halo_owner_counts, group=config.group)
    return owned.index_add(0, meta.recv_local_index, recv)


def distributed_all_reduce(value: torch.Tensor, config: ParticleHaloConfig) -> torch.Tensor:
    out = value.clone()
    dist.all_reduce(out, op=dist.ReduceOp.SUM, group=config.group)
    return out
