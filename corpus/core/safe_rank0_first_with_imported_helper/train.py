"""The "rank 0 first" idiom written with an imported barrier helper under two complementary guards: one barrier per rank."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn

from comm import rank, wait_for_everyone


def tokenize_corpus(src: str, dest: str) -> None:
    if os.path.exists(dest):
        return
    with open(src) as f:
        ids = [hash(w) % 1000 for w in f.read().split()]
    torch.save(torch.tensor(ids), dest)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--text", default="corpus.txt")
    parser.add_argument("--tokens", default="tokens.pt")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    if rank() != 0:
        wait_for_everyone()
    else:
        tokenize_corpus(args.text, args.tokens)
    if rank() == 0:
        wait_for_everyone()

    ids = torch.load(args.tokens)
    emb = nn.Embedding(1000, 16)
    opt = torch.optim.SGD(emb.parameters(), lr=0.1)
    for step in range(20):
        loss = emb(ids[step * 8:(step + 1) * 8]).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
