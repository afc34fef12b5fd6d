"""The fix: local rank 0 copies, every rank meets at the barrier afterwards."""
import os
import shutil

import torch.distributed as dist


def stage_dataset(src: str, node_cache: str) -> str:
    local_rank = int(os.environ.get("MPI_LOCALRANKID", "0"))
    if local_rank == 0 and not os.path.isdir(node_cache):
        shutil.copytree(src, node_cache)
    dist.barrier()
    return node_cache


def main() -> None:
    os.environ.setdefault("RANK", os.environ.get("PMI_RANK", "0"))
    dist.init_process_group("gloo")
    stage_dataset("/lustre/datasets/imagenet", "/tmp/imagenet")
