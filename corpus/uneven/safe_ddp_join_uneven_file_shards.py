"""Per-rank file shards of different lengths, trained inside `with model.join():`: DDP shadows the all_reduces of ranks that ran out of data, so nobody hangs."""
import argparse
import glob

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-glob", default="data/shard_*.pt")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    my_files = sorted(glob.glob(args.data_glob))[rank::world_size]

    model = DDP(nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1)))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    with model.join():
        for path in my_files:
            data = torch.load(path)
            loss = nn.functional.mse_loss(model(data["x"]), data["y"])
            opt.zero_grad()
            loss.backward()
            opt.step()
    if rank == 0:
        torch.save(model.module.state_dict(), "final.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
