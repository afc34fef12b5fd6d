"""Fix for per-rank file shards: the ranks agree on `min(len(my_files))` with all_reduce(MIN) and all run exactly that many DDP steps."""
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
    steps = torch.tensor([len(my_files)])
    dist.all_reduce(steps, op=dist.ReduceOp.MIN)

    model = DDP(nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1)))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for i in range(int(steps.item())):
        data = torch.load(my_files[i])
        loss = nn.functional.mse_loss(model(data["x"]), data["y"])
        opt.zero_grad()
        loss.backward()
        opt.step()
    if rank == 0:
        print(f"trained {int(steps.item())} shards per rank; {len(my_files) - int(steps.item())} left over on rank 0")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
