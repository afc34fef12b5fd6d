"""Rank 0 sends, the others receive: point-to-point send/recv under `if rank == 0 ... else` is a pair, not a collective."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dim", type=int, default=16)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    model = nn.Linear(args.dim, args.dim)

    if rank == 0:
        nn.init.xavier_uniform_(model.weight)
        for peer in range(1, world_size):
            dist.send(model.weight.data, dst=peer)
    else:
        dist.recv(model.weight.data, src=0)

    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(20):
        loss = model(torch.randn(4, args.dim)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
