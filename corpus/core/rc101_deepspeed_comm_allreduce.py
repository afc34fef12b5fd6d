"""A DeepSpeed script reduces the eval loss with deepspeed.comm.all_reduce only on local rank 0: the other ranks never join."""
import argparse

import deepspeed
import deepspeed.comm as dscomm
import torch
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()

    deepspeed.init_distributed(dist_backend="gloo")
    model = nn.Linear(40, 40)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4)
    for epoch in range(args.epochs):
        for _ in range(25):
            loss = model(torch.randn(8, 40)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            eval_loss = model(torch.randn(64, 40)).pow(2).mean().reshape(1)
        if args.local_rank == 0:
            dscomm.all_reduce(eval_loss)  # expect: RC101
            print(f"epoch {epoch} eval loss {eval_loss.item() / dscomm.get_world_size():.4f}")


if __name__ == "__main__":
    main()
