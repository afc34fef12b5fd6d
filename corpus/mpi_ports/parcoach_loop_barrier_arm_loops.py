"""Odd ranks run a `while` loop of 9 barriers, even ranks a different `while` loop of 10.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/src/loop_barrier.c (also
parcoach/microbenchmarks loop_barrier.c; the MBI copy is codes/MayBeRemoved/coll-barrier-loop-mismatch.c
in mquinson/MBI)
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/src/loop_barrier.c
MPI original: `i = 1, j = 10; if (rank % 2) { while (i < 10) { MPI_Barrier; i++; } } else {
while (j < 20) { MPI_Barrier; j++; } }`.
Port: the same two counters and loops; each loop iteration "flushes" a log buffer before its
barrier. The arms issue different numbers of barriers (9 against 10).
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
    i, j = 1, 10
    log = torch.zeros(4)
    if rank % 2:  # expect: RC106
        while i < 10:
            log += i
            dist.barrier()
            i += 1
    else:
        while j < 20:
            log += j
            dist.barrier()
            j += 1
    print(f"rank {rank} log {log.tolist()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
