"""Each rank trains on `files[rank::world_size]`; with 10 files on 4 ranks two ranks get one file fewer, leave the loop early and the rest hang in DDP's gradient all_reduce."""
import argparse
import glob

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def load_shard(path):
    data = torch.load(path)
    return data["x"], data["y"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-glob", default="data/shard_*.pt")
    parser.add_argument("--lr", type=float, default=1e-3)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    files = sorted(glob.glob(args.data_glob))
    my_files = files[rank::world_size]

    model = DDP(nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1)))
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for path in my_files:  # expect: RC103
        x, y = load_shard(path)
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    if rank == 0:
        torch.save(model.module.state_dict(), "final.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
