"""The rank comes from int(os.environ["RANK"]); the accuracy all_reduce sits under `if rank == 0`, so rank 0 hangs."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()

    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    dist.init_process_group("gloo", rank=rank, world_size=world_size)

    model = nn.Linear(20, 5)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(args.epochs):
        correct = torch.zeros(1)
        for _ in range(10):
            x, y = torch.randn(args.batch_size, 20), torch.randint(0, 5, (args.batch_size,))
            logits = model(x)
            loss = nn.functional.cross_entropy(logits, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            correct += (logits.argmax(1) == y).sum()
        if rank == 0:
            dist.all_reduce(correct)  # expect: RC101
            print(f"epoch {epoch} acc {correct.item() / (10 * args.batch_size * world_size):.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
