"""Correct: a loop of barriers whose trip count is the length of the command line, the same on
every rank.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/SVG/inter/barrier_loop.c
("Barrier in a loop, no error")
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/SVG/inter/barrier_loop.c
MPI original: `for (int i = 0; i < argc; i++) MPI_Barrier(WORLD);`
Port: `for i in range(len(sys.argv)):` around an all-reduce of a step counter.
"""
import sys

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    print(f"Hi from Process {rank}")
    steps = torch.zeros(1)
    for i in range(len(sys.argv)):
        steps += 1
        dist.all_reduce(steps)
    print(f"Test OK {steps.item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
