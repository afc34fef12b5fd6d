"""A flag derived from the rank (`n = 1` on odd ranks, `2` on even) decides whether a helper is
called, and the helper reduces to rank 0; every rank then meets in a barrier.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/src/MPIexample.c
(also parcoach/microbenchmarks MPIexample.c)
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/src/MPIexample.c
MPI original: `f()` sets `n = r % 2 ? 1 : 2`, calls `g(s)` when `n == 1`, then MPI_Barrier;
`g(int s)` does `if (s > 256) MPI_Reduce(...)`. Two levels of calls, the rank reaching the guard
only through `n`.
Port: `report(payload)` reduces the payload to rank 0 when it is larger than a threshold (the
payload size is the same on every rank and, unlike the original's `s > 256` on a small run, large
enough to take the branch); `epoch_end()` computes `n` from the rank and calls `report` only when
`n == 1`, then barriers.
"""
import torch
import torch.distributed as dist

THRESHOLD = 256


def report(payload: torch.Tensor) -> None:
    if payload.numel() > THRESHOLD:
        dist.reduce(payload, dst=0)


def epoch_end(payload: torch.Tensor) -> None:
    r = dist.get_rank()
    if r % 2:
        n = 1
    else:
        n = 2
    if n == 1:
        report(payload)  # expect: RC101
    dist.barrier()


def main():
    dist.init_process_group("gloo")
    payload = torch.ones(512)
    epoch_end(payload)
    print(f"rank {dist.get_rank()} finished, payload sum {payload.sum().item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
