"""Best-checkpoint saving compares each rank's own validation loss; only the ranks whose local loss improved call `dcp.save`, which plans the checkpoint collectively, so they wait for the others."""
import argparse

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def validate(model, batches):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for x, y in batches:
            total += nn.functional.mse_loss(model(x), y).item()
    model.train()
    return total / len(batches)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=20)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    model = DDP(nn.Linear(12, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    val_batches = [(torch.randn(64, 12), torch.randn(64, 1)) for _ in range(8)]
    best = float("inf")
    for epoch in range(args.epochs):
        for _ in range(100):
            x = torch.randn(32, 12)
            loss = nn.functional.mse_loss(model(x), x.sum(1, keepdim=True))
            opt.zero_grad()
            loss.backward()
            opt.step()
        val_loss = validate(model, val_batches)
        if val_loss < best:
            best = val_loss
            dcp.save({"model": model.state_dict()}, checkpoint_id="ckpt/best")  # expect: RC101
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
