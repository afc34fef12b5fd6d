"""Rank 0 alone calls report_epoch(), which reaches an all_reduce two modules away (reporting -> metrics): rank 0 hangs."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn

from reporting import report_epoch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--log", default="train_log.jsonl")
    args = parser.parse_args()

    dist.init_process_group("gloo", timeout=dist.default_pg_timeout)
    rank = dist.get_rank()
    model = nn.Linear(64, 10)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    for epoch in range(args.epochs):
        loss_sum, correct, seen = 0.0, 0, 0
        for _ in range(30):
            x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))
            logits = model(x)
            loss = nn.functional.cross_entropy(logits, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            loss_sum += loss.item() * 32
            correct += (logits.argmax(1) == y).sum().item()
            seen += 32
        if rank == 0:
            report_epoch(epoch, loss_sum, correct, seen, args.log)  # expect: RC101
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
