"""A function parameter is first a value every rank shares, then is overwritten with the rank; the
same test guards a barrier before and after.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/src/pointer-instance.c
(also parcoach/microbenchmarks pointer-instance.c)
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/src/pointer-instance.c
MPI original: `void f(int a) { if (a > 0) MPI_Barrier(...); MPI_Comm_rank(..., &a); if (a > 0)
MPI_Barrier(...); }` called as `f(argc)`. Only the second barrier depends on the rank; the
benchmark tests that an analysis tells the two instances of `a` apart.
Port: `checkpoint_sync(a)` called with `len(sys.argv)`; `a = dist.get_rank()` between the two
guarded barriers.
"""
import sys

import torch
import torch.distributed as dist


def checkpoint_sync(a: int) -> None:
    if a > 0:
        dist.barrier()
    a = dist.get_rank()
    if a > 0:
        dist.barrier()  # expect: RC101


def main():
    dist.init_process_group("gloo")
    state = torch.zeros(2)
    checkpoint_sync(len(sys.argv))
    print(f"rank {dist.get_rank()} state {state.tolist()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
