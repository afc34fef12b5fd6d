"""save_checkpoint() returns early on every rank but 0, then rank 0 waits in a barrier the others never reach."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn


def save_checkpoint(model, optimizer, epoch, out_dir):
    rank = dist.get_rank()
    if rank != 0:
        return  # expect: RC102
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"epoch_{epoch:03d}.pt")
    torch.save({"model": model.state_dict(), "optim": optimizer.state_dict(), "epoch": epoch}, path)
    # make sure the file is on disk before anyone tries to resume from it
    dist.barrier()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--out", default="checkpoints")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    model = nn.Linear(10, 10)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(args.epochs):
        for _ in range(20):
            loss = model(torch.randn(4, 10)).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        save_checkpoint(model, optimizer, epoch, args.out)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
