"""While rank 0 writes the checkpoint, the `elif` arm (all other ranks, in debug mode) enters a barrier rank 0 never issues."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--debug-sync", action="store_true")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = nn.GRU(16, 32, batch_first=True)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(args.epochs):
        for _ in range(30):
            out, _ = model(torch.randn(4, 12, 16))
            loss = out.pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        if rank == 0:
            torch.save(model.state_dict(), f"gru_epoch{epoch}.pt")
            print(f"saved epoch {epoch}")
        elif args.debug_sync:
            dist.barrier()  # expect: RC101
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
