"""The rank is used only as an argument (seed, sampler shard, device tag), never as a branch condition around a collective."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    torch.manual_seed(args.seed + rank)
    device = torch.device("cpu")
    tag = f"[rank {rank} / local {local_rank}]"

    dataset = TensorDataset(torch.randn(1024, 10), torch.randint(0, 2, (1024,)))
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)
    model = nn.Linear(10, 2).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            opt.zero_grad()
            loss.backward()
            for p in model.parameters():
                dist.all_reduce(p.grad)
                p.grad /= world_size
            opt.step()
        print(tag, f"epoch {epoch} last loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
