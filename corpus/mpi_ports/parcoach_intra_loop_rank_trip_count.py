"""A loop of barriers whose trip count is `rank + 10 * argc`: every rank runs a different number
of rounds.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/SVG/inter/intra_loop.c
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/SVG/inter/intra_loop.c
MPI original: `for (i = 0; i < argc; i++) MPI_Barrier(...);` (uniform) and then
`for (i = 0; i < rank + argc * 10; i++) MPI_Barrier(...);` (rank-dependent trip count).
Port: the same two loops, `len(sys.argv)` for argc; the second loop all-reduces a running loss
each round.
"""
import sys

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    argc = len(sys.argv)
    for i in range(argc):
        dist.barrier()
    loss = torch.ones(1)
    for i in range(rank + argc * 10):  # expect: RC103
        dist.all_reduce(loss)
        loss /= dist.get_world_size()
    print(f"rank {rank} loss {loss.item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
