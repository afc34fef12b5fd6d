"""OLMo/Molmo-style rank helpers: `get_global_rank()` reads `RANK` or asks torch (`os.environ.get(
"RANK") or dist.get_rank()`) when the job is distributed (a helper of the project's own says so)
and returns 0 otherwise. The resume path is set on the global rank 0 only (molmo#33: the resume
block indented into the rank-0 logging block), so only rank 0 loads the sharded checkpoint."""
import os
from pathlib import Path

import torch.distributed as dist
import torch.distributed.checkpoint as dcp


def is_distributed() -> bool:
    """Whether a process group is up."""
    return dist.is_available() and dist.is_initialized()


def get_global_rank() -> int:
    if is_distributed():
        return int(os.environ.get("RANK") or dist.get_rank())
    return 0


def get_local_rank() -> int:
    return int(os.environ.get("LOCAL_RANK") or 0)


def main(cfg, state: dict) -> None:
    if get_global_rank() == 0:
        print("config:", cfg)
        latest = Path(cfg.save_folder) / "latest"
        if latest.exists():
            cfg.load_path = str(latest)
    if cfg.load_path is not None:
        dcp.load(state, checkpoint_id=cfg.load_path)  # expect: RC101
    if get_local_rank() == 0:
        dist.barrier()  # expect: RC101
