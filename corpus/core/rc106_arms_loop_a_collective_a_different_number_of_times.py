"""A bandwidth benchmark: rank 0 times its all-reduces and prints each, the others just run them.
Rank 0's loop was given one more round to warm up the timer, so it issues eleven all-reduces
while the others issue ten: its last one waits forever."""
import time

import torch
import torch.distributed as dist


def benchmark(numel: int) -> None:
    buf = torch.ones(numel)
    if dist.get_rank() == 0:  # expect: RC106
        for step in range(11):
            start = time.perf_counter()
            dist.all_reduce(buf)
            print(f"step {step}: {time.perf_counter() - start:.4f}s")
    else:
        for _ in range(10):
            dist.all_reduce(buf)
