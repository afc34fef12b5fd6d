"""Fix for all_gather of variable-length predictions without pickling: the length is all-reduced with MAX, every rank pads to it, and the real lengths travel in a fixed-size tensor."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threshold", type=float, default=0.5)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    world_size = dist.get_world_size()
    model = nn.Linear(40, 1)
    model.load_state_dict(torch.load("detector.pt"))
    x = torch.load(f"features_part{dist.get_rank()}.pt")
    with torch.no_grad():
        preds = torch.nonzero(torch.sigmoid(model(x)).squeeze(-1) > args.threshold).squeeze(-1)

    length = torch.tensor([preds.numel()])
    lengths = [torch.zeros_like(length) for _ in range(world_size)]
    dist.all_gather(lengths, length)
    max_len = torch.tensor([preds.numel()])
    dist.all_reduce(max_len, op=dist.ReduceOp.MAX)
    padded = torch.full((int(max_len.item()),), -1, dtype=torch.long)
    padded[: preds.numel()] = preds
    gathered = [torch.empty_like(padded) for _ in range(world_size)]
    dist.all_gather(gathered, padded)
    if dist.get_rank() == 0:
        parts = [g[: int(n.item())] for g, n in zip(gathered, lengths)]
        print(f"{sum(p.numel() for p in parts)} positives across ranks")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
