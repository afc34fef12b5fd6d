"""`from torch.distributed import barrier as sync_point`: the renamed barrier is called only on rank 0 after saving."""
import argparse

import torch
import torch.nn as nn
from torch.distributed import barrier as sync_point
from torch.distributed import destroy_process_group, get_rank, init_process_group


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()

    init_process_group("gloo")
    model = nn.Bilinear(6, 6, 1)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(args.epochs):
        for _ in range(15):
            a, b = torch.randn(4, 6), torch.randn(4, 6)
            loss = model(a, b).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        if get_rank() == 0:
            torch.save(model.state_dict(), f"bilinear_{epoch}.pt")
            sync_point()  # expect: RC101
    destroy_process_group()


if __name__ == "__main__":
    main()
