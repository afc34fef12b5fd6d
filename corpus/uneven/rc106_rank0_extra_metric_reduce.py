"""Rank 0 all-reduces the loss and then also the gradient norm for its log line; the other ranks reduce only the loss, so rank 0's second all_reduce has no partner."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--log-every", type=int, default=20)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = nn.Sequential(nn.Linear(20, 40), nn.ReLU(), nn.Linear(40, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(args.steps):
        x = torch.randn(32, 20)
        loss = (model(x) - x.sum(1, keepdim=True)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % args.log_every:
            continue
        loss_t = loss.detach().reshape(1)
        if rank == 0:  # expect: RC106
            dist.all_reduce(loss_t)
            norm = torch.stack([p.grad.norm() for p in model.parameters()]).norm().reshape(1)
            dist.all_reduce(norm)
            print(f"step {step} loss {loss_t.item():.3f} grad-norm {norm.item():.3f}")
        else:
            dist.all_reduce(loss_t)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
