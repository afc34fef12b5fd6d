"""On an HPE Cray (PALS/mpiexec) system the rank is read from PALS_RANKID; a profiling helper exits
every rank but 0 before the final all_reduce of the timings."""
import os
import sys
import time

import torch
import torch.distributed as dist


def profile_and_report(step_fn, steps: int) -> None:
    rank = int(os.environ["PALS_RANKID"])
    start = time.perf_counter()
    for _ in range(steps):
        step_fn()
    elapsed = torch.tensor([time.perf_counter() - start])
    if rank != 0:
        sys.exit(0)  # expect: RC102
    dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
    print(f"slowest rank: {elapsed.item():.2f}s")
