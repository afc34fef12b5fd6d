"""A module-level RANK global read from the environment guards an all_gather_object in a helper: only rank 0 calls it."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn

RANK = int(os.environ.get("RANK", "0"))
WORLD_SIZE = int(os.environ.get("WORLD_SIZE", "1"))


def log_predictions(preds):
    if RANK == 0:
        everyone = [None] * WORLD_SIZE
        dist.all_gather_object(everyone, preds)  # expect: RC101
        flat = [p for chunk in everyone for p in chunk]
        print(f"collected {len(flat)} predictions")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    dist.init_process_group("gloo", rank=RANK, world_size=WORLD_SIZE)
    model = nn.Linear(6, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    preds = []
    for _ in range(args.steps):
        logits = model(torch.randn(4, 6))
        loss = logits.logsumexp(1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        preds.extend(logits.argmax(1).tolist())
    log_predictions(preds)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
