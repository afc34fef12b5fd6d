"""The "rank 0 first" idiom (workers wait, rank 0 prepares the data and releases them), then a
barrier every rank reaches: each class issues two barriers, from different lines."""
import os

import torch
import torch.distributed as dist


def prepare(root: str) -> torch.Tensor:
    path = os.path.join(root, "tokens.pt")
    if not os.path.exists(path):
        os.makedirs(root, exist_ok=True)
        torch.save(torch.randint(0, 100, (1000,)), path)
    return torch.load(path)


def main() -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    if rank != 0:
        dist.barrier()
    tokens = prepare("data")
    if rank == 0:
        dist.barrier()
    dist.barrier()
    total = torch.tensor([float(tokens.sum())])
    dist.all_reduce(total)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
