"""Every rank all-reduces its per-class sample counts, but odd ranks pass MAX where even ranks pass
SUM; the evaluation's completeness check then finds the wrong total.

Origin: MPI Bugs Initiative, generator scripts/generators/CollArgGenerator.py in mquinson/MBI
("Generate code with Op mismatch"), generated code ParamMatching_Op_MPI_Allreduce_nok.c
URL: https://github.com/mquinson/MBI/blob/1bf81e65704ce6ff01177bd2af042cdcfd30b1be/scripts/generators/CollArgGenerator.py
MPI original: `MPI_Op op = MPI_SUM; if (rank % 2) op = MPI_MAX; MPI_Allreduce(&val, &sum, 1, type,
op, newcom);` (ERROR: OperatorMatching).
Port: the same `op` variable, SUM by default and reassigned to MAX on odd ranks, passed as
`op=`. Gloo does not detect the mismatch and does not hang: it reduces each chunk of the tensor
with the op of the rank that owns the chunk, so every rank gets the same, partly summed and partly
maxed, counts. What fails is what a real evaluation does next: it checks that the counts add up to
the dataset size, and raises on every rank.
"""
import torch
import torch.distributed as dist

NUM_CLASSES = 8
SAMPLES_PER_CLASS_PER_RANK = 5


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    dataset_size = NUM_CLASSES * SAMPLES_PER_CLASS_PER_RANK * world_size
    counts = torch.full((NUM_CLASSES,), float(SAMPLES_PER_CLASS_PER_RANK))
    op = dist.ReduceOp.SUM
    if rank % 2:
        op = dist.ReduceOp.MAX
    dist.all_reduce(counts, op=op)  # expect: RC104
    total = int(counts.sum().item())
    if total != dataset_size:
        raise RuntimeError(f"evaluated {total} samples but the dataset has {dataset_size}")
    print(f"rank {rank}: per-class counts {counts.tolist()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
