"""Post-processing of a halo-distributed model's raw outputs (nvalchemi/distributed/
output_consolidation.py, before NVIDIA/nvalchemi-toolkit#143). Each output key is classified and
reduced, the first matching rule wins:

    key in all_reduce_outputs          -> SUM all-reduce of the per-rank partial (energy, virial)
    per-atom and owned-only            -> slice to the owned rows
    per-atom and autograd              -> halo reverse exchange (all-to-all) of the halo partials
    per-atom, not autograd             -> slice to the owned rows
    otherwise                          -> passthrough (already replicated)

(The toolkit's ShardTensor path also divides autograd outputs by the world size to undo a replicated
energy; this copy computes each rank's energy over its owned atoms, so no such factor arises.)
"""
from __future__ import annotations

import os
import warnings
from collections import OrderedDict
from enum import Enum
from typing import Any, Dict, Optional

import torch
import torch.distributed as dist

from .halo import ParticleHaloConfig, ParticleHaloMetadata, distributed_all_reduce, halo_reverse_exchange


class OutputKind(Enum):
    PER_NODE = "per_node"
    PER_GRAPH = "per_graph"
    GLOBAL = "global"
    UNKNOWN = "unknown"


_UNDECLARED_WARNED: set = set()


def _debug_enabled() -> bool:
    return os.environ.get("ALCHEMI_CONSOLIDATE_DEBUG", "0") != "0"


def consolidate_padded_outputs(
    output: Dict[str, Any],
    autograd_outputs: frozenset,
    meta: ParticleHaloMetadata,
    halo_config: ParticleHaloConfig,
    world_size: int,
    owned_only_outputs: Optional[frozenset] = None,
    all_reduce_outputs: Optional[frozenset] = None,
    output_kinds: Optional[Dict[str, OutputKind]] = None,
) -> "OrderedDict[str, Any]":
    """Reduce the outputs of a forward on this rank's padded (owned + halo) atoms to per-rank-correct
    values. Key order preserved."""
    owned_only_outputs = owned_only_outputs or frozenset()
    all_reduce_outputs = all_reduce_outputs or frozenset()
    output_kinds = output_kinds or {}
    n_owned, n_padded = meta.n_owned, meta.n_padded

    reduced: "OrderedDict[str, Any]" = OrderedDict()
    for key, value in output.items():
        if not isinstance(value, torch.Tensor):
            reduced[key] = value
            continue
        is_autograd = key in autograd_outputs
        kind = output_kinds.get(key, OutputKind.UNKNOWN)
        if kind is OutputKind.GLOBAL:
            reduced[key] = value
            continue
        if kind is OutputKind.PER_NODE:
            is_per_atom = True
        elif kind is OutputKind.PER_GRAPH:
            is_per_atom = False
        else:
            is_per_atom = value.shape[0] == n_padded
            if key not in _UNDECLARED_WARNED:
                _UNDECLARED_WARNED.add(key)
                warnings.warn(f"output {key!r} has no declared kind; using the shape heuristic", stacklevel=2)

        if key in all_reduce_outputs:  # expect: RC106
            # per-rank partial (energy of the owned atoms, virial of their interactions): sum over the mesh
            reduced[key] = distributed_all_reduce(value, halo_config)
            continue
        if is_per_atom and key in owned_only_outputs:
            reduced[key] = value[:n_owned]
            continue
        if is_per_atom and is_autograd:
            # halo rows hold this rank's partial gradient at its copies of other ranks' atoms:
            # route them to the owners and add them there
            reduced[key] = halo_reverse_exchange(value, meta, halo_config)
            if _debug_enabled():
                rank = dist.get_rank() if dist.is_initialized() else 0
                print(f"[consolidate rank {rank}] key={key!r} n_owned={n_owned} n_padded={n_padded} "
                      f"sum={reduced[key].detach().double().sum().item():+.6e}", flush=True)
            continue
        if is_per_atom:
            reduced[key] = value[:n_owned]
        else:
            reduced[key] = value
    return reduced
