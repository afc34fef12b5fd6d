"""Correct: a helper reads the rank but writes a constant into the caller's out-parameter, so the
barrier it guards is taken by every rank.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/SVG/inter/inter_sideeffect.c
(`falseSideEffect`, commented "False positive" in the benchmark)
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/SVG/inter/inter_sideeffect.c
MPI original: `void falseSideEffect(int *a) { MPI_Comm_rank(..., &r); *a = 0; }`; main: `int c =
0; falseSideEffect(&c); if (c > 0) MPI_Barrier(...);` -- no rank takes the barrier.
Port: `reset_slot(out)` reads the rank (for its log line) and stores 1 in `out[0]`; every rank
then takes the barrier (the port stores 1 rather than 0 so that the guarded barrier really runs).
"""
import torch
import torch.distributed as dist


def reset_slot(out: list) -> None:
    r = dist.get_rank()
    print(f"rank {r} resets its slot")
    out[0] = 1


def main():
    dist.init_process_group("gloo")
    dist.barrier()
    c = [0]
    reset_slot(c)
    if c[0] > 0:
        dist.barrier()
    print(f"rank {dist.get_rank()} slot {c[0]} {torch.ones(1).item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
