"""Correct: every rank broadcasts the seed from the same root, kept in a variable the ranks do not
change.

Origin: MPI Bugs Initiative, generator scripts/generators/CollArgGenerator.py in mquinson/MBI (the
template with no `change_arg` injected; CollArgGenerator writes only the `_nok` variants of the
root family, so this is the template's unmodified form)
URL: https://github.com/mquinson/MBI/blob/1bf81e65704ce6ff01177bd2af042cdcfd30b1be/scripts/generators/CollArgGenerator.py
MPI original: `int root = 0; MPI_Bcast(buf, buff_size, type, root, newcom);`
Port: `root = 0` and `dist.broadcast(seed, src=root)`; the seed's value (not its shape) differs
per rank before the broadcast.
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    seed = torch.tensor([1234 + rank])
    root = 0
    dist.broadcast(seed, src=root)
    torch.manual_seed(int(seed.item()))
    print(f"rank {rank} seeded with {seed.item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
