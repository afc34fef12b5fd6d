"""Inside the even ranks' loop, a test on the rank calls `sys.exit`, so those ranks never reach
the barrier that closes the program.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/src/loop_exit.c
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/src/loop_exit.c
MPI original: `if (rank % 2) { while (i < 10) i++; } else { while (j < 20) { if (rank < 10)
exit(-1); j++; } } MPI_Barrier(MPI_COMM_WORLD);` -- the even ranks exit inside their loop.
Port: odd ranks count their warm-up steps; even ranks run a validation loop that bails out with
`sys.exit(-1)` when `rank < 10` (true for every even rank of a small run); every surviving rank
then waits in the final barrier.
"""
import sys

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    size = dist.get_world_size()
    if size < 2:
        print("This test needs at least 2 processes")
        dist.destroy_process_group()
        return
    i, j = 1, 10
    weights = torch.randn(8)
    if rank % 2:
        while i < 10:
            weights *= 0.9
            i += 1
    else:
        while j < 20:
            if rank < 10:
                print(f"rank {rank}: validation shard missing, giving up")
                sys.exit(-1)  # expect: RC102
            j += 1
    dist.barrier()
    print(f"rank {rank} done, {weights.norm():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
