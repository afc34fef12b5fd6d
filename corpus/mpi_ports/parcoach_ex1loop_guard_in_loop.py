"""Two nested loops of barriers every rank runs, then a loop whose barrier only odd ranks issue,
then a common barrier.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/SVG/ex1loop.c (function `g`)
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/SVG/ex1loop.c
MPI original: `for i<5 for j<5 MPI_Barrier;` then `for (i = 0; i < 5; i++) if (r % 2)
MPI_Barrier;` then MPI_Barrier.
Port: the same three parts; the uniform 5x5 loop is a warm-up, the guarded one an odd-rank-only
"refresh".
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    r = dist.get_rank()
    cache = torch.zeros(5)
    for i in range(5):
        for j in range(5):
            dist.barrier()
    for i in range(5):
        if r % 2:
            cache[i] = r
            dist.barrier()  # expect: RC101
    dist.barrier()
    print(f"rank {r} cache {cache.tolist()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
