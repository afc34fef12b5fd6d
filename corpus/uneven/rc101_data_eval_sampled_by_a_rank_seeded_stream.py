"""Spot-check evaluation: each rank draws from its own random stream (`default_rng(seed + rank)`,
so the ranks' augmentations differ) and also decides from it whether to evaluate this step; the
evaluation all-reduces its loss, so the ranks that drew it wait for those that did not."""
import argparse

import numpy as np
import torch
import torch.distributed as dist


def evaluate(model, batch):
    loss = model(batch).mean().detach()
    dist.all_reduce(loss)
    return loss.item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval-fraction", type=float, default=0.05)
    args = parser.parse_args()
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    rng = np.random.default_rng(args.seed + rank)
    model = torch.nn.Linear(8, 1)
    for _ in range(100):
        batch = torch.randn(4, 8) * rng.uniform(0.9, 1.1)
        if rng.random() < args.eval_fraction:
            evaluate(model, batch)  # expect: RC101


if __name__ == "__main__":
    main()
