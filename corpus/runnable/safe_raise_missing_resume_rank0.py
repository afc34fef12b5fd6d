"""Rank 0 looks for the resume checkpoint and broadcasts what it found; when it is missing every
rank starts from step 0 together."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn


def resume_step(path: str) -> int:
    found_and_step = torch.zeros(2, dtype=torch.long)
    if dist.get_rank() == 0 and os.path.exists(path):
        found_and_step[0] = 1
        found_and_step[1] = torch.load(path)["step"]
    dist.broadcast(found_and_step, src=0)
    if not found_and_step[0].item():
        if dist.get_rank() == 0:
            print(f"no checkpoint at {path}; starting from step 0")
        return 0
    return int(found_and_step[1].item())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--resume", default="checkpoints/does-not-exist/last.pt")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    start = resume_step(args.resume)
    model = nn.Linear(4, 4)
    lr = 0.1
    for _ in range(start, start + 3):
        loss = model(torch.randn(2, 4)).pow(2).mean()
        model.zero_grad()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * p.grad
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
