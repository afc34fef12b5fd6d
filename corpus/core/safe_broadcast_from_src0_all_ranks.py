"""`dist.broadcast(t, src=0)` is called by every rank; only the preparation of the tensor depends on the rank."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=1234)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    seed = torch.zeros(1, dtype=torch.int64)
    if rank == 0:
        seed[0] = args.seed
    dist.broadcast(seed, src=0)
    torch.manual_seed(int(seed.item()))

    model = nn.Linear(8, 8)
    for p in model.parameters():
        dist.broadcast(p.data, src=0)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(10):
        loss = model(torch.randn(2, 8)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
