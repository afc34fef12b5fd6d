"""LOCAL_RANK read with os.environ.get() guards a barrier meant to wait for the node-local cache: only local rank 0 enters it."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn


def build_cache(path: str) -> None:
    os.makedirs(path, exist_ok=True)
    torch.save(torch.randn(1000, 16), os.path.join(path, "features.pt"))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cache", default="/tmp/feature_cache")
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()

    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    dist.init_process_group("gloo")

    if local_rank == 0:
        build_cache(args.cache)
        dist.barrier()  # expect: RC101

    feats = torch.load(os.path.join(args.cache, "features.pt"))
    model = nn.Linear(16, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(args.steps):
        batch = feats[step % 100 * 10:(step % 100 + 1) * 10]
        loss = model(batch).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
