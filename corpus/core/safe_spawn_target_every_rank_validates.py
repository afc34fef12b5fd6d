"""The look-alike: every spawned process validates (the metric is all-reduced), and only GPU 0
prints it."""
import argparse

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP


def validate(model, data):
    model.eval()
    with torch.no_grad():
        score = model(data).mean()
    dist.all_reduce(score)
    return score.item()


def main_worker(gpu, args):
    dist.init_process_group("gloo", init_method=args.dist_url, world_size=args.world_size, rank=gpu)
    model = DDP(torch.nn.Linear(16, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        loss = model(torch.randn(8, 16)).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        score = validate(model, torch.randn(8, 16))
        if gpu == 0:
            print(epoch, score)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--world-size", type=int, default=2)
    parser.add_argument("--dist-url", default="tcp://127.0.0.1:23456")
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()
    mp.spawn(main_worker, args=(args,), nprocs=args.world_size)


if __name__ == "__main__":
    main()
