"""Each rank votes to stop on a NaN loss; the vote is all-reduced with MAX, so the `break` on it is taken by all ranks together."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--lr", type=float, default=0.5)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = nn.Linear(10, 1)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    for step in range(args.steps):
        loss = model(torch.randn(32, 10)).pow(2).mean()
        stop = torch.tensor([1.0 if not torch.isfinite(loss) else 0.0])
        dist.all_reduce(stop, op=dist.ReduceOp.MAX)
        if stop.item() > 0:
            if rank == 0:
                print(f"non-finite loss at step {step} on some rank, stopping")
            break
        opt.zero_grad()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
