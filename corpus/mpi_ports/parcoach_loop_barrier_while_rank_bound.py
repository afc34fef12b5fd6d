"""One `while` loop for every rank, but its start and stop come from the rank's parity: odd ranks
run 9 synchronised rounds, even ranks 10.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/src/loop_barrier.c
(also parcoach/microbenchmarks loop_barrier.c)
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/src/loop_barrier.c
MPI original: two `while` loops in the arms of `if (rank % 2)`, from 1 to 10 and from 10 to 20,
each with an MPI_Barrier per iteration.
Port: the same bounds folded into one loop, `start, stop = (1, 10) if rank % 2 else (10, 20)`,
so the loop condition itself depends on the rank (the shape Python code takes when the two arms
differ only in their bounds); each round all-reduces a counter.
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    start, stop = (1, 10) if rank % 2 else (10, 20)
    counter = torch.zeros(1)
    step = start
    while step < stop:  # expect: RC103
        counter += 1
        dist.all_reduce(counter)
        step += 1
    print(f"rank {rank} ran {stop - start} rounds, counter {counter.item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
