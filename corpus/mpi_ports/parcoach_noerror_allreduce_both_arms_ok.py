"""Correct: both arms of a rank-parity test issue the same all-reduce.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/SVG/noerror_allreduce.c
("no error, all processes call a allreduce")
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/SVG/noerror_allreduce.c
MPI original: `if (rank % 2) MPI_Allreduce(&i, &res, ...); else MPI_Allreduce(&i, &res, ...);`
Port: odd and even ranks prepare their contribution differently, then each arm all-reduces it.
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    i = torch.ones(1)
    print(f"Hi from proc {rank}")
    if rank % 2:
        res = i * 2
        dist.all_reduce(res)
    else:
        res = i.clone()
        dist.all_reduce(res)
    print(f"Bye from proc {rank}: {res.item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
