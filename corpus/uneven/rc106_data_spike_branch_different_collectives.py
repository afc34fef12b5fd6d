"""On a local loss spike a rank gathers diagnostics with all_gather_object, otherwise it all-reduces the loss for logging; the branch is on per-rank data, so ranks in different arms issue different collectives."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--spike", type=float, default=10.0)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = DDP(nn.Linear(50, 1))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    for step in range(args.steps):
        x = torch.randn(64, 50)
        loss = nn.functional.mse_loss(model(x), x[:, :1])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if loss.item() > args.spike:  # expect: RC106
            report = [None] * dist.get_world_size()
            dist.all_gather_object(report, {"rank": rank, "step": step, "loss": loss.item()})
            torch.save(report, f"spike_{step}.pt")
        else:
            logged = loss.detach().reshape(1)
            dist.all_reduce(logged)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
