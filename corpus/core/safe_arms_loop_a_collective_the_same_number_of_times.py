"""The look-alike of rc106_arms_loop_a_collective_a_different_number_of_times.py: rank 0 times
and prints its all-reduces in a counted `while`, the others run them in a `for`: ten rounds on both
sides."""
import time

import torch
import torch.distributed as dist


def benchmark(numel: int) -> None:
    buf = torch.ones(numel)
    rounds = 10
    if dist.get_rank() == 0:
        step = 0
        while step < 10:
            start = time.perf_counter()
            dist.all_reduce(buf)
            print(f"step {step}: {time.perf_counter() - start:.4f}s")
            step += 1
    else:
        for _ in range(rounds):
            dist.all_reduce(buf)
