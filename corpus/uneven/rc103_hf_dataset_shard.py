"""A Hugging Face dataset is split with `ds.shard(num_shards=world_size, index=rank)`; the shards differ by one row, the DataLoader lengths differ, and the short ranks stop issuing DDP's backward all_reduce."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from datasets import load_dataset
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader


def collate(rows):
    x = torch.tensor([r["features"] for r in rows], dtype=torch.float32)
    y = torch.tensor([r["label"] for r in rows])
    return x, y


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train-file", default="train.jsonl")
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    ds = load_dataset("json", data_files=args.train_file)["train"]
    ds = ds.shard(num_shards=world_size, index=rank)
    loader = DataLoader(ds, batch_size=32, collate_fn=collate)

    model = DDP(nn.Linear(128, 4))
    opt = torch.optim.Adam(model.parameters(), lr=3e-4)
    for epoch in range(args.epochs):
        for x, y in loader:  # expect: RC103
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
