"""A recursive helper all-reduces once per level, and the depth it recurses to comes from the
rank.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/SVG/inter_example_loop.c
(README: "mismatch error + recursive function")
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/SVG/inter_example_loop.c
MPI original: a loop of barriers each followed by `inloop(i)` -> `myRecursiveFunction(i)`, a
`while (i < 3) myRecursiveFunction(++i);` recursion, then `myBarrier(); if (rank % 2)
MPI_Barrier(...)`. The recursion itself issues no collective there.
Port: the recursion carries the collective: `reduce_levels(t, level, depth)` all-reduces and
recurses while `level + 1 < depth`, and main passes `depth = 2 + rank % 2`, so odd ranks go one
level deeper (one more all-reduce).
"""
import torch
import torch.distributed as dist


def reduce_levels(t: torch.Tensor, level: int, depth: int) -> None:
    dist.all_reduce(t)
    if level + 1 < depth:
        reduce_levels(t, level + 1, depth)  # expect: RC101


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    for i in range(2):
        dist.barrier()
    t = torch.ones(4)
    reduce_levels(t, 0, 2 + rank % 2)
    print(f"rank {rank} t {t.tolist()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
