"""`is_master = rank == 0` is stored in a variable and later guards a grad-norm all_reduce: only the master enters it."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--log-every", type=int, default=25)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    is_master = rank == 0
    model = nn.Sequential(nn.Linear(10, 10), nn.ReLU(), nn.Linear(10, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    for step in range(args.steps):
        loss = model(torch.randn(32, 10)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        opt.step()
        if is_master and step % args.log_every == 0:
            grad_norm = torch.stack([p.grad.norm() for p in model.parameters()]).norm()
            dist.all_reduce(grad_norm)  # expect: RC101
            print(f"step {step} loss {loss.item():.4f} grad_norm {grad_norm.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
