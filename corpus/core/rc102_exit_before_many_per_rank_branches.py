"""A checkpoint-restoring entry point: rank 0 returns when the run directory exists and the run is
not resumed; the rest restores optional per-rank state, each piece only where this rank's own file
is there, and agrees on it. More rank tests than rankcheck compares classes of ranks for in full:
the exit is found whichever of them the classes it picks hold fixed."""
import os

import torch
import torch.distributed as dist

PARTS = ("optimizer", "scheduler", "scaler", "sampler", "rng", "ema")


def restore(run_dir: str, resume: bool) -> int:
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    flags = torch.zeros(1)
    if rank == 0 and os.path.exists(run_dir) and not resume:
        print(f"{run_dir} exists; pass --resume to continue it")
        return -1  # expect: RC102
    dist.all_reduce(flags)
    if os.path.exists(f"{run_dir}/optimizer.{rank}.pt"):
        dist.all_reduce(flags)  # expect: RC101
    if os.path.exists(f"{run_dir}/scheduler.{rank}.pt"):
        dist.all_reduce(flags)  # expect: RC101
    if os.path.exists(f"{run_dir}/scaler.{rank}.pt"):
        dist.all_reduce(flags)  # expect: RC101
    if os.path.exists(f"{run_dir}/sampler.{rank}.pt"):
        dist.all_reduce(flags)  # expect: RC101
    if os.path.exists(f"{run_dir}/rng.{rank}.pt"):
        dist.all_reduce(flags)  # expect: RC101
    if os.path.exists(f"{run_dir}/ema.{rank}.pt"):
        dist.all_reduce(flags)  # expect: RC101
    return 0
