"""The look-alike of the rank helpers' resume block, as molmo#33 fixed it: every rank resolves
the same resume path, and only the logging stays on rank 0. A helper that returns 0 where the job
is not distributed (`if not is_distributed(): return 0`, first) is still the rank elsewhere."""
import os
from pathlib import Path

import torch.distributed as dist
import torch.distributed.checkpoint as dcp


def is_distributed() -> bool:
    return dist.is_available() and dist.is_initialized()


def get_global_rank() -> int:
    if not is_distributed():
        return 0
    return int(os.environ.get("RANK") or dist.get_rank())


def main(cfg, state: dict) -> None:
    if get_global_rank() == 0:
        print("config:", cfg)
    latest = Path(cfg.save_folder) / "latest"
    if latest.exists():
        cfg.load_path = str(latest)
    if cfg.load_path is not None:
        dcp.load(state, checkpoint_id=cfg.load_path)
    dist.barrier()
    if get_global_rank() != 0:
        return
    print("loaded")
