"""Launched with Intel MPI / MPICH (mpiexec): the local rank comes from MPI_LOCALRANKID. Local rank 0
prepares the node-local cache and calls the barrier inside its branch."""
import os
import shutil

import torch.distributed as dist


def stage_dataset(src: str, node_cache: str) -> str:
    local_rank = int(os.environ.get("MPI_LOCALRANKID", "0"))
    if local_rank == 0:
        if not os.path.isdir(node_cache):
            shutil.copytree(src, node_cache)
        dist.barrier()  # expect: RC101
    return node_cache


def main() -> None:
    os.environ.setdefault("RANK", os.environ.get("PMI_RANK", "0"))
    dist.init_process_group("gloo")
    stage_dataset("/lustre/datasets/imagenet", "/tmp/imagenet")
