"""A streaming dataset is split with `split_dataset_by_node(ds, rank=rank, world_size=ws)`; the per-node example counts differ, so one rank runs out first and the others wait in DDP's backward."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from datasets import load_dataset
from datasets.distributed import split_dataset_by_node
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-files", default="shards/*.jsonl")
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    ds = load_dataset("json", data_files=args.data_files, split="train", streaming=True)
    ds = split_dataset_by_node(ds, rank=rank, world_size=world_size)
    ds = ds.map(lambda row: {"x": row["embedding"], "y": row["score"]})
    loader = DataLoader(ds.with_format("torch"), batch_size=args.batch_size)

    model = DDP(nn.Sequential(nn.Linear(384, 128), nn.GELU(), nn.Linear(128, 1)))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for step, batch in enumerate(loader):  # expect: RC103
        pred = model(batch["x"].float()).squeeze(-1)
        loss = nn.functional.mse_loss(pred, batch["y"].float())
        opt.zero_grad()
        loss.backward()
        opt.step()
        if rank == 0 and step % 100 == 0:
            print(f"step {step} loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
