"""Odd ranks run 9 barriers in one loop; even ranks run a nested loop whose inner counter is
never reset, 3 barriers in all.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/src/loop_barrier2.c
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/src/loop_barrier2.c
MPI original: `if (rank % 2) { while (i < 10) { MPI_Barrier; i++; } } else { while (j < 20) {
while (n < 3) { MPI_Barrier; n++; } j++; } }` -- `n` is not reset, so the even arm issues 3
barriers in total.
Port: the same counters: odd ranks sync per step, even ranks sync per "micro-batch" with a
micro-batch counter declared outside the outer loop.
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    if dist.get_world_size() < 2:
        dist.destroy_process_group()
        return
    i, j, n = 1, 10, 0
    acc = torch.zeros(2)
    if rank % 2:  # expect: RC106
        while i < 10:
            acc[0] += 1
            dist.barrier()
            i += 1
    else:
        while j < 20:
            while n < 3:
                acc[1] += 1
                dist.barrier()
                n += 1
            j += 1
    print(f"rank {rank} acc {acc.tolist()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
