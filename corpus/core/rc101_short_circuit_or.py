"""`is_main or dist.barrier()` makes the workers wait for the main rank, which never issues the matching barrier."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn


def prepare_vocab(path: str) -> None:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(f"tok{i}" for i in range(1000)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--vocab", default="cache/vocab.txt")
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    is_main = dist.get_rank() == 0
    if is_main:
        prepare_vocab(args.vocab)
    is_main or dist.barrier()  # expect: RC101

    with open(args.vocab) as f:
        vocab_size = len(f.read().splitlines())
    emb = nn.Embedding(vocab_size, 16)
    opt = torch.optim.SGD(emb.parameters(), lr=0.1)
    for _ in range(args.steps):
        loss = emb(torch.randint(0, vocab_size, (32,))).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
