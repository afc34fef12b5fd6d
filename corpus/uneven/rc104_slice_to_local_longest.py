"""The per-position loss curve is all-reduced only up to `longest`, the longest sequence this rank saw (to save bandwidth); `pos_loss[:longest]` has a different length on every rank."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

PAD = 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seq-len", type=int, default=128)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    dataset = torch.load("sequences.pt")  # LongTensor [N, seq_len], right-padded
    loader = DataLoader(dataset, batch_size=8, sampler=DistributedSampler(dataset, shuffle=False))
    model = nn.Sequential(nn.Embedding(8000, 64), nn.Linear(64, 8000))
    model.load_state_dict(torch.load("lm.pt"))
    pos_loss = torch.zeros(args.seq_len - 1)
    longest = 0
    with torch.no_grad():
        for tokens in loader:
            logits = model(tokens[:, :-1])
            per_token = nn.functional.cross_entropy(logits.transpose(1, 2), tokens[:, 1:], reduction="none")
            mask = tokens[:, 1:] != PAD
            pos_loss += (per_token * mask).sum(0)
            longest = max(longest, int(mask.sum(1).max()))
    dist.all_reduce(pos_loss[:longest])  # expect: RC104
    if dist.get_rank() == 0:
        print(pos_loss[:longest].tolist())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
