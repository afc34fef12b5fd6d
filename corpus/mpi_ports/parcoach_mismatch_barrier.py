"""Odd ranks wait in a barrier after staging their shard; even ranks never call it.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/src/mismatch_barrier.c
(also parcoach/microbenchmarks mismatch_barrier.c)
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/src/mismatch_barrier.c
MPI original: after the usual `size < 2` check, `if (rank % 2) MPI_Barrier(MPI_COMM_WORLD);`, then
MPI_Finalize. Only odd ranks enter the barrier, so they wait for even ranks that never arrive.
Port: the same `rank % 2` guard around `dist.barrier()`; the odd ranks "stage" a shard into a
buffer first so the barrier has a plausible reason to be there.
"""
import io

import torch
import torch.distributed as dist


def stage_shard(shard: torch.Tensor) -> int:
    buf = io.BytesIO()
    torch.save(shard, buf)
    return buf.getbuffer().nbytes


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    if world_size < 2:
        print("this program needs at least 2 ranks")
        dist.destroy_process_group()
        return

    shard = torch.arange(16, dtype=torch.float32) + rank
    if rank % 2:
        nbytes = stage_shard(shard)
        print(f"rank {rank} staged {nbytes} bytes")
        dist.barrier()  # expect: RC101
    print(f"rank {rank} done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
