"""Pretraining from WebDataset tar shards: each process reads only its own shards
(`nodesplitter=wds.split_by_node`), and the shards hold different numbers of samples, so one rank
runs out of batches first and leaves the epoch while the others wait in DDP's gradient all-reduce
of their next step."""
import argparse
import glob

import torch
import torch.distributed as dist
import webdataset as wds
from torch.nn.parallel import DistributedDataParallel as DDP


def make_loader(pattern, batch_size):
    urls = sorted(glob.glob(pattern))
    dataset = wds.WebDataset(urls, nodesplitter=wds.split_by_node, shardshuffle=True).decode("torch").to_tuple("x.pth", "y.pth")
    return wds.WebLoader(dataset.batched(batch_size), batch_size=None, num_workers=4)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shards", default="data/train-*.tar")
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    model = DDP(torch.nn.Linear(16, 1).cuda())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = make_loader(args.shards, args.batch_size)
    for x, y in loader:  # expect: RC103
        loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
