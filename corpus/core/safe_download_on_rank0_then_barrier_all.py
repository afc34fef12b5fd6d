"""Rank 0 downloads the tokenizer files, then every rank (rank 0 included) meets at one barrier placed after the branch."""
import argparse
import os
import urllib.request

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--vocab-url", default="http://example.invalid/vocab.txt")
    parser.add_argument("--vocab", default="cache/vocab.txt")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    if rank == 0 and not os.path.exists(args.vocab):
        os.makedirs(os.path.dirname(args.vocab), exist_ok=True)
        urllib.request.urlretrieve(args.vocab_url, args.vocab)
    dist.barrier()

    with open(args.vocab) as f:
        vocab = f.read().splitlines()
    emb = nn.Embedding(len(vocab), 8)
    opt = torch.optim.SGD(emb.parameters(), lr=0.1)
    for _ in range(10):
        loss = emb(torch.randint(0, len(vocab), (16,))).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        for p in emb.parameters():
            dist.all_reduce(p.grad)
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
