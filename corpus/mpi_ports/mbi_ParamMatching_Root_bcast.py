"""Every rank broadcasts the model's init seed, but odd ranks name root 1 and even ranks root 0.

Origin: MPI Bugs Initiative, generator scripts/generators/CollArgGenerator.py in mquinson/MBI
("Generate code with root mismatch"), generated code ParamMatching_Root_MPI_Bcast_nok.c
URL: https://github.com/mquinson/MBI/blob/1bf81e65704ce6ff01177bd2af042cdcfd30b1be/scripts/generators/CollArgGenerator.py
MPI original: `int root = 0; if (rank % 2) root = 1; MPI_Bcast(buf, buff_size, type, root,
newcom);` -- "Odd ranks use 0 as a root while even ranks use 1 as a root" (ERROR: RootMatching).
Port: the same `root` variable reassigned on odd ranks and passed as `src=`.
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    seed = torch.tensor([1234 + rank])
    root = 0
    if rank % 2:
        root = 1
    dist.broadcast(seed, src=root)  # expect: RC104
    torch.manual_seed(int(seed.item()))
    print(f"rank {rank} seeded with {seed.item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
