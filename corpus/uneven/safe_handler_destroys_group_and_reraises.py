"""On an error the handler only tears down the local process group (no collective) and re-raises, so the launcher sees the failure at once."""
import argparse
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def train(steps: int) -> None:
    model = DDP(nn.Linear(16, 4))
    opt = torch.optim.Adam(model.parameters())
    for _ in range(steps):
        loss = model(torch.randn(8, 16)).logsumexp(-1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    try:
        train(args.steps)
    except BaseException as err:
        print(f"rank {dist.get_rank()} failed: {err!r}", file=sys.stderr)
        dist.destroy_process_group()
        raise
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
