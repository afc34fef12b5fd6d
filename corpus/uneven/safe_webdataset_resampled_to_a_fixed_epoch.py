"""The WebDataset FAQ's fix for multi-node training: every process samples shards with replacement
(`resampled=True`) and the epoch is cut to a fixed number of samples (`with_epoch`), so every rank
runs the same number of steps; no process is handed a share of its own."""
import argparse
import glob

import torch
import torch.distributed as dist
import webdataset as wds
from torch.nn.parallel import DistributedDataParallel as DDP


def make_loader(pattern, batch_size, steps):
    urls = sorted(glob.glob(pattern))
    dataset = wds.WebDataset(urls, resampled=True, split_by_node=False).decode("torch").to_tuple("x.pth", "y.pth")
    return wds.WebLoader(dataset.batched(batch_size), batch_size=None, num_workers=4).with_epoch(steps)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shards", default="data/train-*.tar")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--steps", type=int, default=1000)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    model = DDP(torch.nn.Linear(16, 1).cuda())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in make_loader(args.shards, args.batch_size, args.steps):
        loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
