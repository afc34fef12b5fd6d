"""The root scatters work and then waits in a barrier; the other ranks wait in the barrier first
and scatter afterwards.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/src/CIVL_barrierScatter.c
(from the CIVL examples; also parcoach/microbenchmarks CIVL_barrierScatter.c)
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/src/CIVL_barrierScatter.c
MPI original: `if (rank == 0) { fill sendbuf; MPI_Scatter(... root 0); MPI_Barrier; } else {
MPI_Barrier; MPI_Scatter(... root 0); print }`.
Port: rank 0 builds one work item per rank and calls `dist.scatter(..., src=0)` then
`dist.barrier()`; the other ranks call them in the opposite order.
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    procs = dist.get_world_size()
    recv = torch.zeros(1)
    if rank == 0:  # expect: RC106
        sendbuf = [torch.tensor([float(procs - i)]) for i in range(procs)]
        dist.scatter(recv, sendbuf, src=0)
        dist.barrier()
    else:
        dist.barrier()
        dist.scatter(recv, None, src=0)
        print(f"process {rank} receives {recv.item():.0f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
