"""`from runtime import RANK` (a module-level global in another module) guards an all_reduce: only rank 0 calls it."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn

from runtime import RANK, WORLD_SIZE


def evaluate(model: nn.Module) -> torch.Tensor:
    with torch.no_grad():
        return model(torch.randn(256, 14)).pow(2).mean().reshape(1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()

    dist.init_process_group("gloo", rank=RANK, world_size=WORLD_SIZE)
    model = nn.Linear(14, 14)
    opt = torch.optim.Adam(model.parameters())
    for epoch in range(args.epochs):
        for _ in range(30):
            loss = model(torch.randn(8, 14)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        val = evaluate(model)
        if RANK == 0:
            dist.all_reduce(val)  # expect: RC101
            print(f"epoch {epoch}: val {val.item() / WORLD_SIZE:.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
