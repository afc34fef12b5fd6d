"""Rank 0 calls checkpointing.publish() (broadcast, then barrier) while the others call wait_for_checkpoint() (barrier, then broadcast): the arms' collective sequences differ one module away."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn

from checkpointing import publish, wait_for_checkpoint


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=4)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = nn.Linear(16, 16)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(args.epochs):
        for _ in range(25):
            out = model(torch.randn(4, 16))
            loss = out.pow(2).mean()
            opt.zero_grad()
            loss.backward()
            for p in model.parameters():
                dist.all_reduce(p.grad)
            opt.step()
        if rank == 0:  # expect: RC106
            path = publish(model, f"epoch{epoch}.pt")
        else:
            path = wait_for_checkpoint()
        model.load_state_dict(torch.load(path))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
