"""Rank-dependent ternaries choose a log prefix and a log level only; the collectives run unconditionally."""
import argparse
import logging

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    prefix = "[main]" if rank == 0 else f"[worker {rank}]"
    logging.basicConfig(level=logging.INFO if rank == 0 else logging.WARNING, format=prefix + " %(message)s")
    log = logging.getLogger("train")

    model = nn.Linear(4, 4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(args.steps):
        loss = model(torch.randn(2, 4)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        opt.step()
        log.info("step %d loss %.4f", step, loss.item())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
