"""A per-rank entry of a table that every rank builds alike (`quota[rank]`) guards a barrier.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/src/index-dep.c
(also parcoach/microbenchmarks index-dep.c)
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/src/index-dep.c
MPI original: `A[i] = i` for every i < size, then `if (A[r] > 10) MPI_Barrier(...)`: the array is
the same on every rank, the element read is not.
Port: every rank builds `quota = [20 * i for i in range(world_size)]` and reads its own entry;
the ranks whose quota is over 10 wait in a barrier (the factor 20 makes the test true on rank 1 of
a 2-rank run, which the original's `A[r] = r > 10` needs 12 ranks for).
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    r = dist.get_rank()
    s = dist.get_world_size()
    quota = [20 * i for i in range(s)]
    samples = torch.randn(quota[r] + 1, 4)
    if quota[r] > 10:
        dist.barrier()  # expect: RC101
    print(f"rank {r} processed {samples.shape[0]} samples")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
