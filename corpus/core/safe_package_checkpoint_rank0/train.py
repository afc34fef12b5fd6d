"""Rank 0 calls ckpt.save_checkpoint() (a package with relative imports, no collective inside); the barrier is outside the guard."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn

from ckpt import save_checkpoint


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--out", default="checkpoints")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = nn.Linear(10, 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        for _ in range(20):
            loss = nn.functional.cross_entropy(model(torch.randn(8, 10)), torch.randint(0, 3, (8,)))
            opt.zero_grad()
            loss.backward()
            for p in model.parameters():
                dist.all_reduce(p.grad)
            opt.step()
        if rank == 0:
            path = save_checkpoint({"model": model.state_dict(), "epoch": epoch}, args.out, epoch)
            print(f"saved {path}")
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
