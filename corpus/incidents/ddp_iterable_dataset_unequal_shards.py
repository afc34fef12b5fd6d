"""Translation model trained with DDP on an IterableDataset that streams a line-per-example corpus
and gives every rank the lines `i % world_size == rank`.

Thread: https://github.com/pytorch/pytorch/issues/141069 ("[BUG] IterableDataset with DDP and unequal data lengths on different ranks causes NCCL timeout")
Project: pytorch/pytorch
What hung: "if data is not distributed in equal sizes across all ranks (gpus), then on some ranks
loss is not calculated for last batch of epoch ... rank 1 does not have any batches for ring-all
reduce algorithm to syncronize losses" -- the rank with the longer shard entered one more
backward, whose gradient all-reduce the other rank never joined, and the job died at the NCCL
watchdog during the next validation.
Fix (the reporter's, in the thread: make sure the data is split in equal sizes across the ranks):
give every rank the same number of examples, here by cutting the corpus to a whole number of
global batches before sharding.
Expected rankcheck finding: RC103 on the training loop over the hand-sharded IterableDataset.
"""
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, IterableDataset


class ParallelCorpus(IterableDataset):
    def __init__(self, path: str, tokenizer, rank: int, world_size: int):
        self.path = path
        self.tokenizer = tokenizer
        self.rank = rank
        self.world_size = world_size

    def __iter__(self):
        with open(self.path) as f:
            for i, line in enumerate(f):
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
    loader = DataLoader(ParallelCorpus(args.train, tokenizer, rank, world_size), batch_size=args.batch_size, collate_fn=collate)

    for epoch in range(args.epochs):
        model.train()
        for src, tgt in loader:  # expect: RC103
            loss = model(src.cuda(), tgt.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
