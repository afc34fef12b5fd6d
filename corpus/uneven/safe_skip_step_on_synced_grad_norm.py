"""The step is skipped when the gradient norm is not finite, but the norm is taken after DDP's backward all_reduce, so the gradients (and the `continue`) are identical on every rank."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--max-norm", type=float, default=1.0)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    model = DDP(nn.Sequential(nn.Linear(64, 64), nn.GELU(), nn.Linear(64, 64)))
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    skipped = 0
    for step in range(args.steps):
        x = torch.randn(32, 64)
        loss = (model(x) - x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        total_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_norm)
        if not torch.isfinite(total_norm):
            skipped += 1
            continue
        opt.step()
    if dist.get_rank() == 0:
        print(f"skipped {skipped} steps with non-finite gradients")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
