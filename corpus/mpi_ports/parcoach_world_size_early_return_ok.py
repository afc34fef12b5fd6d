"""Correct: the "needs at least 2 processes" preamble every PARCOACH test starts with returns
early on a condition every rank shares, then every rank barriers.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/src/mismatch_barrier.c and
siblings (the `if (size < 2) { printf; MPI_Finalize(); return 1; }` preamble), with the correct
body of tests/MPI/basic/SVG/inter/barrier_noerror.c
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/SVG/inter/barrier_noerror.c
MPI original: `if (size < 2) { ...; MPI_Finalize(); return 1; } ... MPI_Barrier(WORLD);`
Port: `if world_size < 2: dist.destroy_process_group(); return` and then a barrier every rank
calls.
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    size = dist.get_world_size()
    if size < 2:
        print("This test needs at least 2 processes")
        dist.destroy_process_group()
        return
    print(f"Hi from Process {rank}")
    dist.barrier()
    print(f"Test OK {torch.ones(1).item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
