"""Rank 0 stops once its own training loss is below the target and breaks out of the loop before
the gradient all_reduce; rank 1 is still in the loop and waits in that all_reduce forever."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--target-loss", type=float, default=5.0)
    parser.add_argument("--max-steps", type=int, default=5)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(4)
    model = nn.Linear(6, 1)
    lr = 0.1

    for step in range(args.max_steps):
        loss = model(torch.randn(16, 6)).pow(2).mean()
        model.zero_grad()
        loss.backward()
        if rank == 0 and step > 0 and loss.item() < args.target_loss:
            print(f"target loss reached at step {step}")
            break  # expect: RC102
        for p in model.parameters():
            dist.all_reduce(p.grad)
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * p.grad

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
