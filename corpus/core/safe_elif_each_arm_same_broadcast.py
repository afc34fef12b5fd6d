"""Three arms (rank 0 loads, resume zero-init, otherwise allocate) each end in the same broadcast from 0: every rank issues one."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--init", default="init_weights.pt")
    parser.add_argument("--zero-init", action="store_true")
    parser.add_argument("--dim", type=int, default=32)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    shape = (args.dim, args.dim)
    if rank == 0:
        weight = torch.load(args.init)
        dist.broadcast(weight, src=0)
    elif args.zero_init:
        weight = torch.zeros(shape)
        dist.broadcast(weight, src=0)
    else:
        weight = torch.empty(shape)
        dist.broadcast(weight, src=0)

    model = nn.Linear(args.dim, args.dim, bias=False)
    with torch.no_grad():
        model.weight.copy_(weight)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(10):
        loss = model(torch.randn(4, args.dim)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
