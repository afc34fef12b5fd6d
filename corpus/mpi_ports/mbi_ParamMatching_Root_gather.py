"""Every rank gathers its token count, but the destination it names depends on its parity.

Origin: MPI Bugs Initiative, generator scripts/generators/CollArgGenerator.py in mquinson/MBI
("Generate code with root mismatch"), generated code ParamMatching_Root_MPI_Gather_nok.c
URL: https://github.com/mquinson/MBI/blob/1bf81e65704ce6ff01177bd2af042cdcfd30b1be/scripts/generators/CollArgGenerator.py
MPI original: `if (rank % 2) root = 1; MPI_Gather(&val, 1, type, buf, 1, type, root, newcom);`
Port: `dist.gather` with `dst=root`, the gather list passed on the rank that believes itself the
root.
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    tokens = torch.tensor([100.0 * (rank + 1)])
    root = 0
    if rank % 2:
        root = 1
    buf = [torch.zeros(1) for _ in range(world_size)] if rank == root else None
    dist.gather(tokens, buf, dst=root)  # expect: RC104
    if buf is not None:
        print(f"rank {rank} gathered {[b.item() for b in buf]}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
