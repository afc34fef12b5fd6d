"""Half of the "rank 0 first" idiom: the workers wait in a barrier, but rank 0 never issues the releasing barrier."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn


def build_dataset(root: str) -> torch.Tensor:
    path = os.path.join(root, "tokens.pt")
    if not os.path.exists(path):
        os.makedirs(root, exist_ok=True)
        torch.save(torch.randint(0, 500, (10_000,)), path)
    return torch.load(path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-root", default="data")
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    if rank != 0:
        dist.barrier()  # expect: RC101
    tokens = build_dataset(args.data_root)
    # the release `if rank == 0: dist.barrier()` was lost in a refactor

    emb = nn.Embedding(500, 32)
    opt = torch.optim.Adam(emb.parameters())
    for step in range(args.steps):
        batch = tokens[step * 16:(step + 1) * 16]
        loss = emb(batch).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        for p in emb.parameters():
            dist.all_reduce(p.grad)
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
