"""finish() returns on non-zero ranks before comm.sync_all() (a barrier one module away): rank 0 waits there alone."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn

from comm import get_rank, sync_all


def finish(model: nn.Module, out_dir: str) -> None:
    if get_rank() != 0:
        return  # expect: RC102
    os.makedirs(out_dir, exist_ok=True)
    torch.save(model.state_dict(), os.path.join(out_dir, "final.pt"))
    sync_all()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="out")
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    model = nn.Linear(6, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(args.steps):
        loss = model(torch.randn(12, 6)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    finish(model, args.out)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
