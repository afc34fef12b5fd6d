"""Only the main rank checks the wall-clock budget and breaks out; the others keep calling all_reduce and hang."""
import argparse
import time

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-steps", type=int, default=10_000)
    parser.add_argument("--time-budget", type=float, default=3600.0)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    is_main = dist.get_rank() == 0
    model = nn.Linear(128, 128)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    start = time.time()

    for step in range(args.max_steps):
        out = model(torch.randn(16, 128))
        loss = out.pow(2).mean()
        opt.zero_grad()
        loss.backward()

        if is_main and time.time() - start > args.time_budget:
            print(f"time budget exhausted at step {step}, stopping")
            break  # expect: RC102

        for p in model.parameters():
            dist.all_reduce(p.grad)
            p.grad /= dist.get_world_size()
        opt.step()

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
