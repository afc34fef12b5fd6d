"""Rank 0 scatters then gathers; rank 1, in a separate `if`, gathers then scatters.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/src/Aislinn_invalid_order.c
(from the Aislinn examples)
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/src/Aislinn_invalid_order.c
MPI original: `if (rank == 0) { MPI_Scatter; MPI_Gather; }` and then, as a second independent
statement, `if (rank == 1) { MPI_Gather; MPI_Scatter; }` -- not an if/else, two guards.
Port: the same two independent `if` statements around `dist.scatter`/`dist.gather` with root 0.
The marker is on rank 0's first collective: on a 2-rank run it meets rank 1's gather, and on more
ranks the others issue neither.
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world = dist.get_world_size()
    chunk = torch.zeros(3)
    parts = [torch.full((3,), float(i)) for i in range(world)]
    if rank == 0:
        dist.scatter(chunk, parts, src=0)  # expect: RC101
        dist.gather(chunk, parts, dst=0)
    if rank == 1:
        dist.gather(chunk, None, dst=0)
        dist.scatter(chunk, None, src=0)
    print(f"rank {rank} chunk {chunk.tolist()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
