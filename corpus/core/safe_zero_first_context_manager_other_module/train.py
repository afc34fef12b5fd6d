"""`with torch_distributed_zero_first(args.local_rank):` from another module: local rank 0 builds the cache first; safe."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn

from torch_utils import torch_distributed_zero_first


def build_cache(path: str) -> torch.Tensor:
    if not os.path.exists(path):
        torch.save(torch.randn(512, 20), path)
    return torch.load(path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)
    parser.add_argument("--cache", default="cache.pt")
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()

    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        dist.init_process_group("gloo")
    with torch_distributed_zero_first(args.local_rank):
        data = build_cache(args.cache)
    model = nn.Linear(20, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(args.epochs):
        for step in range(8):
            loss = model(data[step * 64:(step + 1) * 64]).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            if dist.is_initialized():
                for p in model.parameters():
                    dist.all_reduce(p.grad)
            opt.step()


if __name__ == "__main__":
    main()
