"""Every rank averages the training loss with an all_reduce and breaks on the same (uniform)
value, so all ranks leave the loop at the same step."""
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
    world_size = dist.get_world_size()
    torch.manual_seed(4)
    model = nn.Linear(6, 1)
    lr = 0.1

    for step in range(args.max_steps):
        loss = model(torch.randn(16, 6)).pow(2).mean()
        model.zero_grad()
        loss.backward()
        mean_loss = loss.detach().clone()
        dist.all_reduce(mean_loss)
        mean_loss /= world_size
        if step > 0 and mean_loss.item() < args.target_loss:
            if rank == 0:
                print(f"target loss reached at step {step}")
            break
        for p in model.parameters():
            dist.all_reduce(p.grad)
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * p.grad

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
