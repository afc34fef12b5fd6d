"""A five-step loop in which even ranks `continue` past the per-step barrier that odd ranks issue.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/SVG/ex1loop.c (function `g`)
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/SVG/ex1loop.c
MPI original: `for (i = 0; i < 5; i++) { if (r % 2) { MPI_Barrier(...); } }` followed by a common
MPI_Barrier -- odd ranks issue five extra barriers.
Port: the same control flow written as the guard clause Python loops use: `if not rank % 2:
continue` before the barrier (the even ranks skip the rest of the body).
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    grads = torch.zeros(4)
    for i in range(5):
        grads += i
        if not rank % 2:
            continue  # expect: RC102
        dist.barrier()
    dist.barrier()
    print(f"rank {rank} grads {grads.tolist()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
