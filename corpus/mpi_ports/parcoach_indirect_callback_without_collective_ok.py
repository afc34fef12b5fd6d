"""Correct: a callback chosen from the command line runs only on the non-zero ranks, but neither
candidate issues a collective; the barrier after it is common.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/src/indirect_ok.c
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/src/indirect_ok.c
MPI original: `void foo(int *a) { (*a)--; } void bar(int *a) { (*a)++; }`; `FuncTy call = argc
== 3 ? foo : bar; if (r) call(&argc); MPI_Barrier(WORLD);` (its buggy sibling indirect_barrier.c
puts the barrier inside foo).
Port: `shrink`/`grow` edit a counter list; `call = shrink if len(sys.argv) == 3 else grow`.
"""
import sys

import torch
import torch.distributed as dist


def shrink(a: list) -> None:
    a[0] -= 1


def grow(a: list) -> None:
    a[0] += 1


def main():
    dist.init_process_group("gloo")
    r = dist.get_rank()
    counter = [len(sys.argv)]
    call = shrink if len(sys.argv) == 3 else grow
    if r:
        call(counter)
    dist.barrier()
    print(f"rank {r} counter {counter[0]} {torch.ones(1).item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
