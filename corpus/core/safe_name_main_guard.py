"""A script whose collectives sit directly under `if __name__ == "__main__":`, a guard every rank takes."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=50)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    model = nn.Linear(5, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(args.steps):
        loss = model(torch.randn(10, 5)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        opt.step()
    dist.barrier()
    if dist.get_rank() == 0:
        print("finished", args.steps, "steps")
    dist.destroy_process_group()
