"""A scan over candidate ids returns early on the rank whose id it meets, skipping the barrier
that ends the function on every other rank.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/src/loop_exit2.c
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/src/loop_exit2.c
MPI original: MPI_Barrier; `while (j < 20) { if (rank == j) { MPI_Finalize(); exit(-1); } j++; }`
MPI_Barrier. Starting from j = 10 the rank that equals j leaves (it needs 11+ ranks to bite).
Port: the loop lives in `drain_and_sync()`; the scan starts at id 1 so a 2-rank run has a rank
that matches, and the exit is a `return` after tearing down this rank's share of the work.
"""
import torch
import torch.distributed as dist


def drain_and_sync(rank: int, queue: torch.Tensor) -> None:
    dist.barrier()
    j = 1
    while j < 20:
        if rank == j:
            queue.zero_()
            return  # expect: RC102
        j += 1
    dist.barrier()


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    if dist.get_world_size() < 2:
        dist.destroy_process_group()
        return
    queue = torch.arange(5, dtype=torch.float32)
    drain_and_sync(rank, queue)
    print(f"rank {rank} queue {queue.tolist()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
