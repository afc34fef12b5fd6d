"""Legacy launcher passes --local_rank; the validation all_reduce runs only when args.local_rank == 0, so it hangs."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def evaluate(model, n_batches=5):
    model.eval()
    correct = torch.zeros(1)
    with torch.no_grad():
        for _ in range(n_batches):
            x, y = torch.randn(16, 12), torch.randint(0, 3, (16,))
            correct += (model(x).argmax(1) == y).sum()
    model.train()
    return correct


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()

    dist.init_process_group("gloo", init_method="env://")
    model = nn.Linear(12, 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(args.epochs):
        for _ in range(50):
            x, y = torch.randn(16, 12), torch.randint(0, 3, (16,))
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        correct = evaluate(model)
        if args.local_rank == 0:
            dist.all_reduce(correct)  # expect: RC101
            print(f"[epoch {epoch}] val correct: {int(correct.item())}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
