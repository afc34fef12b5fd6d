"""A helper writes the rank into a caller's mutable out-parameter; the caller barriers on it.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/SVG/inter/inter_sideeffect.c
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/SVG/inter/inter_sideeffect.c
MPI original: `void sideEffect(int *a) { MPI_Comm_rank(..., &r); *a = r; }`; main: `int a = 0;
sideEffect(&a); if (a > 0) MPI_Barrier(...)` (plus a `falseSideEffect` that writes 0, the
benchmark's false-positive trap; see the matching `_ok` port).
Port: `fill_rank(out)` stores the rank in `out[0]` of a list the caller owns.
"""
import torch
import torch.distributed as dist


def fill_rank(out: list) -> None:
    r = dist.get_rank()
    out[0] = r


def main():
    dist.init_process_group("gloo")
    dist.barrier()
    a = [0]
    fill_rank(a)
    if a[0] > 0:
        dist.barrier()  # expect: RC101
    print(f"rank {dist.get_rank()} saw {a[0]} {torch.ones(1).item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
