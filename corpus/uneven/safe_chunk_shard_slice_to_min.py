"""Fix for `torch.chunk(...)[rank]`: the shard is cut to the all-reduced MIN length before batching, so every rank runs the same number of gradient all_reduces."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    shard = torch.chunk(torch.load("tokens.pt"), world_size)[rank]
    common = torch.tensor([shard.shape[0]])
    dist.all_reduce(common, op=dist.ReduceOp.MIN)
    shard = shard[: int(common.item())]

    model = nn.Sequential(nn.Embedding(5000, 64), nn.Flatten(), nn.Linear(64 * 16, 5000))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for start in range(0, int(common.item()), args.batch_size):
        batch = shard[start:start + args.batch_size]
        loss = nn.functional.cross_entropy(model(batch[:, :16]), batch[:, 16])
        opt.zero_grad()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
            p.grad /= world_size
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
