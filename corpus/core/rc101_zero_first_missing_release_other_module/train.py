"""Uses dist_helpers.main_process_first(rank) around dataset building; the helper's release barrier is missing (see there)."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn

from dist_helpers import main_process_first


def build_features(path: str) -> torch.Tensor:
    if not os.path.exists(path):
        torch.save(torch.randn(2048, 24), path)
    return torch.load(path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--features", default="features.pt")
    parser.add_argument("--steps", type=int, default=64)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    with main_process_first(rank):
        feats = build_features(args.features)
    model = nn.Linear(24, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(args.steps):
        loss = model(feats[step * 32:(step + 1) * 32]).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
