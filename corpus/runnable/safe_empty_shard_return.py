"""A rank with an empty validation shard still joins the all_reduce, contributing zero."""
import torch
import torch.distributed as dist
import torch.nn as nn


def evaluate(model: nn.Module, data: torch.Tensor, rank: int, world_size: int):
    per_rank = (len(data) + world_size - 1) // world_size
    shard = data[rank * per_rank : (rank + 1) * per_rank]
    total = torch.zeros(1)
    if shard.numel() > 0:
        with torch.no_grad():
            total = model(shard).pow(2).sum().reshape(1)
    dist.all_reduce(total)
    return total.item() / len(data)


def main():
    dist.init_process_group("gloo")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(9)
    model = nn.Linear(2, 1)
    val = torch.randn(1, 2)
    score = evaluate(model, val, rank, world_size)
    if rank == 0:
        print(f"validation score {score}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
