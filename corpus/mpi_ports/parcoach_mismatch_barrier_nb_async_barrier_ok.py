"""Correct in torch.distributed (a bug in MPI): odd ranks use a blocking barrier, even ranks an
asynchronous barrier they wait on -- one collective, matched by order.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/src/mismatch_barrier_nb.c (also
parcoach/microbenchmarks mismatch_barrier_nb.c: "Processes with an odd rank execute a blocking
barrier whereas other processes execute a non-blocking barrier")
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/src/mismatch_barrier_nb.c
MPI original: `if (rank % 2) MPI_Barrier(WORLD); else { MPI_Ibarrier(WORLD, &req); MPI_Wait(&req);
}` -- MPI does not match a blocking with a non-blocking collective.
Port: `dist.barrier()` against `dist.barrier(async_op=True).wait()`. In torch.distributed both are
the same barrier operation on the same process group (async_op only changes who waits), so the
ranks match and the program completes; an analysis should not report it.
"""
import torch
import torch.distributed as dist


def c() -> None:
    req = dist.barrier(async_op=True)
    req.wait()


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    if rank % 2:
        dist.barrier()
    else:
        c()
    print(f"rank {rank} passed the barrier {torch.ones(1).item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
