"""Checkpoint-directory helpers of a torchtnt-based trainer."""
import os
import re
from typing import List, Optional

import torch.distributed as dist

_STEP_RE = re.compile(r"epoch_(\d+)_step_(\d+)")


def _sorted_checkpoints(dirpath: str) -> List[str]:
    names = [d for d in os.listdir(dirpath) if _STEP_RE.fullmatch(d)]
    return sorted(names, key=lambda d: tuple(int(x) for x in _STEP_RE.fullmatch(d).groups()))


def get_latest_checkpoint_path(dirpath: str) -> Optional[str]:
    """Rank 0 lists the directory and broadcasts the newest checkpoint path to every rank."""
    latest = [None]
    if dist.get_rank() == 0:
        names = _sorted_checkpoints(dirpath) if os.path.isdir(dirpath) else []
        latest[0] = os.path.join(dirpath, names[-1]) if names else None
    dist.broadcast_object_list(latest, src=0)
    return latest[0]
