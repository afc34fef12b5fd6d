"""A lhotse TTS/ASR recipe: the DynamicBucketingSampler shards the cuts by rank itself and packs
each rank's share into duration buckets, so with `drop_last=False` (the recipe's default) the
ranks get different numbers of batches; the rank with fewer leaves the epoch while the others wait
in DDP's gradient all-reduce (vall-e#131)."""
import argparse

import torch
import torch.distributed as dist
from lhotse import CutSet
from lhotse.dataset import DynamicBucketingSampler, K2SpeechRecognitionDataset
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cuts", default="data/cuts_train.jsonl.gz")
    parser.add_argument("--max-duration", type=float, default=200.0)
    parser.add_argument("--drop-last", type=bool, default=False)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    cuts = CutSet.from_file(args.cuts)
    sampler = DynamicBucketingSampler(cuts, max_duration=args.max_duration, shuffle=True,
                                      drop_last=args.drop_last, rank=rank, world_size=world_size)
    loader = DataLoader(K2SpeechRecognitionDataset(), sampler=sampler, batch_size=None, num_workers=2)
    model = DDP(torch.nn.Linear(80, 500).cuda())
    optimizer = torch.optim.AdamW(model.parameters())
    for batch in loader:  # expect: RC103
        loss = model(batch["inputs"].cuda()).logsumexp(-1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
