"""Odd ranks wait in a barrier on the world group while even ranks wait in a barrier on their
parity subgroup: same collective, different communicators.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/src/mismatch_barrier_com.c
(also parcoach/microbenchmarks mismatch_barrier_com.c)
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/src/mismatch_barrier_com.c
MPI original: `MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &newcom); if (rank % 2)
MPI_Barrier(MPI_COMM_WORLD); else MPI_Barrier(newcom);`
Port: the split becomes two `dist.new_group` calls every rank makes (even ranks, odd ranks); the
even ranks' barrier completes inside their subgroup, the odd ranks wait for them on the world.
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    size = dist.get_world_size()
    evens = dist.new_group(list(range(0, size, 2)))
    odds = dist.new_group(list(range(1, size, 2)))
    newcom = odds if rank % 2 else evens
    if rank % 2:  # expect: RC106
        dist.barrier()
    else:
        dist.barrier(group=newcom)
    print(f"rank {rank} passed its barrier, {torch.ones(1).item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
