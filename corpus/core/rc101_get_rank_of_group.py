"""The guard uses the rank inside the data-parallel group, get_rank(group); the broadcast over that group runs on its rank 0 only."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hidden", type=int, default=48)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    dp_group = dist.new_group(ranks=list(range(dist.get_world_size())))
    model = nn.Linear(args.hidden, args.hidden)

    if dist.get_rank(group=dp_group) == 0:
        nn.init.orthogonal_(model.weight)
        dist.broadcast(model.weight.data, src=0, group=dp_group)  # expect: RC101

    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(20):
        loss = model(torch.randn(4, args.hidden)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
