"""Rank 0 loads the embedding table and the others allocate it; both arms then broadcast from 0, so every rank issues one broadcast."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pretrained", default="embeddings.pt")
    parser.add_argument("--vocab", type=int, default=5000)
    parser.add_argument("--dim", type=int, default=64)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    if rank == 0:
        table = torch.load(args.pretrained)
        dist.broadcast(table, src=0)
    else:
        table = torch.empty(args.vocab, args.dim)
        dist.broadcast(table, src=0)

    emb = nn.Embedding.from_pretrained(table, freeze=False)
    opt = torch.optim.Adam(emb.parameters())
    for _ in range(50):
        loss = emb(torch.randint(0, args.vocab, (32,))).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
