"""A lambda assigned to a name wraps dist.all_reduce; calling it only on the main rank still leaves rank 0 waiting."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn

sum_across_ranks = lambda t: dist.all_reduce(t, op=dist.ReduceOp.SUM)  # noqa: E731


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    is_main = dist.get_rank() == 0
    model = nn.Linear(15, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(args.epochs):
        seen = torch.zeros(1)
        for _ in range(25):
            x = torch.randn(10, 15)
            loss = model(x).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            seen += x.shape[0]
        if is_main:
            sum_across_ranks(seen)  # expect: RC101
            print(f"epoch {epoch}: {int(seen.item())} samples seen in total")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
