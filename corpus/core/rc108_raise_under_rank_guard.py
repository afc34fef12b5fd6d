"""Rank 0 validates the data dir and raises if it is missing; the other ranks wait in broadcast_object_list forever."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn


def list_shards(data_dir: str):
    rank = dist.get_rank()
    shards = [None]
    if rank == 0:
        if not os.path.isdir(data_dir):
            raise FileNotFoundError(f"no dataset at {data_dir}")  # expect: RC108
        shards = [sorted(f for f in os.listdir(data_dir) if f.endswith(".pt"))]
    dist.broadcast_object_list(shards, src=0)
    return shards[0]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--epochs", type=int, default=1)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    shards = list_shards(args.data)
    model = nn.Linear(64, 4)
    opt = torch.optim.Adam(model.parameters())
    for _ in range(args.epochs):
        for name in shards[dist.get_rank()::dist.get_world_size()]:
            x, y = torch.load(os.path.join(args.data, name))
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
