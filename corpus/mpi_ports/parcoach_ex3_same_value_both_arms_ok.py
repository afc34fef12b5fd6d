"""Correct: both arms of a rank test call the same helper, which sets the flag to the same value,
and the flag then guards a barrier -- every rank takes it.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/SVG/ex3.c
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/SVG/ex3.c
MPI original: `void g(int *a) { *a = 1; }`; main: `if (rank) g(&val); else g(&val); if (val)
MPI_Barrier(WORLD);`
Port: `mark_ready(flag)` sets `flag[0] = 1`; both arms of `if rank:` call it.
"""
import torch
import torch.distributed as dist


def mark_ready(flag: list) -> None:
    flag[0] = 1


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    val = [0]
    if rank:
        mark_ready(val)
    else:
        mark_ready(val)
    if val[0]:
        dist.barrier()
    print(f"rank {rank} ready {val[0]} {torch.ones(1).item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
