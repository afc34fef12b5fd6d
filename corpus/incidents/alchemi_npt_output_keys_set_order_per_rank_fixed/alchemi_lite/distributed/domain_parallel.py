"""`DomainParallel` (nvalchemi/distributed/domain_parallel.py): runs a wrapped potential on this rank's
owned atoms plus their halo and consolidates the outputs across the mesh."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Optional

import torch
import torch.distributed as dist
import torch.nn as nn

from ..models.base import BaseModelMixin
from .consolidation import OutputKind, consolidate_padded_outputs
from .halo import ParticleHaloConfig, build_halo_metadata


@dataclass
class MLIPSpec:
    """How a model family's outputs combine across domains."""

    all_reduce_outputs: frozenset = frozenset({"energy", "stress"})
    owned_only_outputs: frozenset = frozenset()
    output_kinds: Dict[str, OutputKind] = field(default_factory=lambda: {
        "energy": OutputKind.PER_GRAPH, "stress": OutputKind.PER_GRAPH, "forces": OutputKind.PER_NODE})


@dataclass
class DomainConfig:
    cutoff: float
    skin: float = 0.5
    group: Optional[dist.ProcessGroup] = None


def radius_graph(positions, cell, cutoff):
    """All pairs within the cutoff under the minimum-image convention (small cells only)."""
    n = positions.size(0)
    inv = torch.linalg.inv(cell)
    diff = positions[None, :, :] - positions[:, None, :]
    frac = diff @ inv
    shifts_frac = -torch.round(frac)
    vec = (frac + shifts_frac) @ cell
    d = vec.norm(dim=-1)
    mask = (d < cutoff) & ~torch.eye(n, dtype=torch.bool, device=positions.device)
    src, dst = torch.nonzero(mask, as_tuple=True)
    return torch.stack([src, dst]), shifts_frac[src, dst]


class DomainParallel(nn.Module):
    def __init__(self, model: BaseModelMixin, config: DomainConfig, spec: Optional[MLIPSpec] = None):
        super().__init__()
        self.model = model
        self.config = config
        self.spec = spec or MLIPSpec()
        self.halo_config = ParticleHaloConfig(cutoff=config.cutoff + config.skin, group=config.group)

    def forward(self, batch: Dict[str, Any]) -> Dict[str, Any]:
        positions, cell = batch["positions"], batch["cell"]
        meta = build_halo_metadata(positions, cell, self.halo_config)
        ids = torch.cat([meta.owned_ids, meta.halo_ids])
        local_pos = positions[ids].detach().requires_grad_(True)
        edge_index, shifts = radius_graph(local_pos, cell, self.config.cutoff)
        node_weight = torch.zeros(ids.numel(), dtype=positions.dtype, device=positions.device)
        node_weight[: meta.n_owned] = 1.0  # each rank's energy counts its owned atoms only
        padded = dict(positions=local_pos, cell=cell, species=batch["species"][ids], edge_index=edge_index,
                      shifts=shifts, node_weight=node_weight)
        output = self.model(padded)
        world_size = self.halo_config.world_size
        return consolidate_padded_outputs(
            output,
            autograd_outputs=self.model.model_config.autograd_outputs,
            meta=meta,
            halo_config=self.halo_config,
            world_size=world_size,
            owned_only_outputs=self.spec.owned_only_outputs,
            all_reduce_outputs=self.spec.all_reduce_outputs,
            output_kinds=self.spec.output_kinds,
        ) | {"owned_ids": meta.owned_ids}
