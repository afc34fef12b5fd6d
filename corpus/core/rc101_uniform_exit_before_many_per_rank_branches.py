"""The look-alike of rc102_exit_before_many_per_rank_branches: the early return tests the arguments
only, alike on every rank, so every rank returns or none does (the per-rank restores after it are
still hazards of their own). With as many rank tests as there, the classes rankcheck compares
must not make a uniform return look rank-dependent."""
import os

import torch
import torch.distributed as dist

PARTS = ("optimizer", "scheduler", "scaler", "sampler", "rng", "ema")


def restore(run_dir: str, resume: bool) -> int:
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    flags = torch.zeros(1)
    if not run_dir and not resume:
        print("nothing to restore")
        return -1
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
