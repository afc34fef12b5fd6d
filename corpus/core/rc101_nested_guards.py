"""On eval epochs (a uniform condition) a nested `if rank == 0:` holds the all_reduce: the inner rank guard makes it hang."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--eval-every", type=int, default=2)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = nn.Linear(12, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        for _ in range(10):
            loss = nn.functional.cross_entropy(model(torch.randn(8, 12)), torch.randint(0, 2, (8,)))
            opt.zero_grad()
            loss.backward()
            opt.step()
        if (epoch + 1) % args.eval_every == 0:
            with torch.no_grad():
                acc = (model(torch.randn(100, 12)).argmax(1) == 1).float().mean().reshape(1)
            if rank == 0:
                dist.all_reduce(acc)  # expect: RC101
                print(f"epoch {epoch}: eval acc {acc.item() / dist.get_world_size():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
