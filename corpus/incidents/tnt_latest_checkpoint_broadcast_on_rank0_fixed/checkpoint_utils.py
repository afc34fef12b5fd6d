"""Checkpoint-directory helpers of a torchtnt-based trainer: a single-rank lister that is
torch.distributed unaware, and the distributed wrapper that broadcasts its answer."""
import os
import re
from typing import List, Optional

import torch.distributed as dist

_STEP_RE = re.compile(r"epoch_(\d+)_step_(\d+)")


def _sorted_checkpoints(dirpath: str) -> List[str]:
    names = [d for d in os.listdir(dirpath) if _STEP_RE.fullmatch(d)]
    return sorted(names, key=lambda d: tuple(int(x) for x in _STEP_RE.fullmatch(d).groups()))


def _get_latest_checkpoint_path(dirpath: str) -> Optional[str]:
    """Single-rank version: no collective, safe to call from rank-0-only code."""
    names = _sorted_checkpoints(dirpath) if os.path.isdir(dirpath) else []
    return os.path.join(dirpath, names[-1]) if names else None


def get_latest_checkpoint_path(dirpath: str) -> Optional[str]:
    """Rank 0 lists the directory and broadcasts the newest checkpoint path to every rank."""
    latest = [_get_latest_checkpoint_path(dirpath) if dist.get_rank() == 0 else None]
    dist.broadcast_object_list(latest, src=0)
    return latest[0]
