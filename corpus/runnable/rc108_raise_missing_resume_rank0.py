"""Rank 0 checks the resume checkpoint and raises when it is missing; rank 1 waits in the
broadcast of the resume step that rank 0 never reaches."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn


def resume_step(path: str) -> int:
    step = torch.zeros(1, dtype=torch.long)
    if dist.get_rank() == 0:
        if not os.path.exists(path):
            raise FileNotFoundError(f"--resume given but {path} does not exist")  # expect: RC108
        step[0] = torch.load(path)["step"]
    dist.broadcast(step, src=0)
    return int(step.item())


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
