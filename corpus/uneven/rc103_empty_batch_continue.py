"""Samples longer than `--max-len` are filtered out of each local batch; a rank whose whole batch was filtered `continue`s and skips DDP's backward all_reduce that the other ranks enter."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


class TokenClassifier(nn.Module):
    def __init__(self, vocab: int, classes: int):
        super().__init__()
        self.emb = nn.EmbeddingBag(vocab, 128)
        self.head = nn.Linear(128, classes)

    def forward(self, tokens, offsets):
        return self.head(self.emb(tokens, offsets))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-len", type=int, default=512)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    dataset = torch.load("reviews.pt")  # list of (token list, label)
    loader = DataLoader(dataset, batch_size=16, sampler=DistributedSampler(dataset), collate_fn=list)
    model = DDP(TokenClassifier(30000, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for batch in loader:
        batch = [(toks, label) for toks, label in batch if len(toks) <= args.max_len]
        if len(batch) == 0:
            continue  # expect: RC103
        tokens = torch.cat([torch.tensor(t) for t, _ in batch])
        offsets = torch.tensor([0] + [len(t) for t, _ in batch[:-1]]).cumsum(0)
        labels = torch.tensor([label for _, label in batch])
        loss = nn.functional.cross_entropy(model(tokens, offsets), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
