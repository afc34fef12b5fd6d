"""On checkpoint steps rank 0 saves and `continue`s, skipping the loss all_reduce that every other rank still issues."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--ckpt-every", type=int, default=200)
    parser.add_argument("--lr", type=float, default=0.1)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    model = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)

    for step in range(args.steps):
        x = torch.randn(64, 8)
        loss = (model(x) - x.sum(dim=1, keepdim=True)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()

        if rank == 0 and step % args.ckpt_every == 0:
            torch.save(model.state_dict(), f"model_{step}.pt")
            continue  # expect: RC102

        reported = loss.detach().clone()
        dist.all_reduce(reported)
        if rank == 0 and step % 50 == 0:
            print(f"step {step} loss {reported.item() / world_size:.5f}")

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
