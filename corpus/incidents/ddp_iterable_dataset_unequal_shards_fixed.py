"""Safe twin of ddp_iterable_dataset_unequal_shards.py: the corpus is cut to a whole number of
batches per rank (the same for every rank) before it is sharded, so every rank runs the same
number of training steps.

Thread: https://github.com/pytorch/pytorch/issues/141069
"""
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, IterableDataset


class ParallelCorpus(IterableDataset):
    def __init__(self, path: str, tokenizer, rank: int, world_size: int, batch_size: int):
        self.path = path
        self.tokenizer = tokenizer
        self.rank = rank
        self.world_size = world_size
        with open(path) as f:
            num_lines = sum(1 for _ in f)
        per_step = world_size * batch_size
        self.usable = (num_lines // per_step) * per_step

    def __iter__(self):
        with open(self.path) as f:
            for i, line in enumerate(f):
                if i >= self.usable:
                    break
                if i % self.world_size != self.rank:
                    continue
                src, tgt = line.rstrip("\n").split("\t")
                yield self.tokenizer(src), self.tokenizer(tgt)


def main(build_model, tokenizer, collate):
    parser = argparse.ArgumentParser()
    parser.add_argument("--train", default="data/train.tsv")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(build_model().cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
    loader = DataLoader(ParallelCorpus(args.train, tokenizer, rank, world_size, args.batch_size), batch_size=args.batch_size, collate_fn=collate)

    for epoch in range(args.epochs):
        model.train()
        for src, tgt in loader:
            loss = model(src.cuda(), tgt.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
