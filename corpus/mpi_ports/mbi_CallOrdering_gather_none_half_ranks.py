"""Only the lower half of the ranks gathers its statistics to rank 0; the upper half calls no
collective at all.

Origin: MPI Bugs Initiative, generator scripts/generators/CollMatchingGenerator.py in
mquinson/MBI, generated code CallOrdering_MPI_Gather_none_nok.c
URL: https://github.com/mquinson/MBI/blob/1bf81e65704ce6ff01177bd2af042cdcfd30b1be/scripts/generators/CollMatchingGenerator.py
MPI original: `if (rank % 2) { MPI_Gather(&val, 1, type, buf, 1, type, root, newcom); } else { }`
-- "Odd ranks call c1 while even ranks do not call any collective".
Port: the same one-collective-versus-none shape with `dist.gather`, but the guard is a split of
the ranks in halves, `rank < world_size // 2`, rather than MBI's parity (the other ports cover
`rank % 2`).
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    val = torch.tensor([float(rank)])
    buf = [torch.zeros(1) for _ in range(world_size)]
    if rank < world_size // 2:
        dist.gather(val, buf if rank == 0 else None, dst=0)  # expect: RC101
    if rank == 0:
        print("gathered", [b.item() for b in buf])
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
