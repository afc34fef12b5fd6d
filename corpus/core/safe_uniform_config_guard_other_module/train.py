"""Collectives guarded by imported config constants (SYNC_BN_STATS, LOG_EVERY): uniform conditions, so every rank agrees."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn

import config
from config import LOG_EVERY, SYNC_BN_STATS


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=4)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = nn.Sequential(nn.Linear(8, config.HIDDEN), nn.BatchNorm1d(config.HIDDEN), nn.Linear(config.HIDDEN, 1))
    opt = torch.optim.Adam(model.parameters())
    for epoch in range(args.epochs):
        for step in range(50):
            loss = model(torch.randn(16, 8)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step % LOG_EVERY == 0:
                reported = loss.detach().reshape(1)
                dist.all_reduce(reported)
                if rank == 0:
                    print(f"epoch {epoch} step {step}: {reported.item():.4f}")
        if SYNC_BN_STATS:
            dist.all_reduce(model[1].running_mean)
            model[1].running_mean /= dist.get_world_size()
        if (epoch + 1) % config.EVAL_EVERY == 0:
            dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
