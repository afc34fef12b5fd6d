"""`if is_main():` (imported helper returning get_rank() == 0) guards a dist.reduce that every rank must enter: it hangs."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn

from dist_utils import is_main, world


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=4)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    model = nn.Linear(18, 6)
    opt = torch.optim.Adam(model.parameters())
    for epoch in range(args.epochs):
        correct = torch.zeros(1)
        for _ in range(20):
            x, y = torch.randn(16, 18), torch.randint(0, 6, (16,))
            logits = model(x)
            loss = nn.functional.cross_entropy(logits, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            correct += (logits.argmax(1) == y).sum()
        if is_main():
            dist.reduce(correct, dst=0)  # expect: RC101
            print(f"epoch {epoch}: acc {correct.item() / (20 * 16 * world()):.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
