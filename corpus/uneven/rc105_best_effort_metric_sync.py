"""A "best effort" metric sync wraps the all_reduce of the epoch metrics in try/except and passes; a rank that fails (e.g. the metric tensor is on the wrong device) skips the all_reduce the others entered."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def sync_metrics(metrics: dict) -> dict:
    packed = torch.tensor([metrics["loss"], metrics["weight_norm"]], dtype=torch.float64)
    dist.all_reduce(packed)
    packed /= dist.get_world_size()
    return {"loss": packed[0].item(), "weight_norm": packed[1].item()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    model = nn.Linear(6, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(args.epochs):
        x = torch.randn(256, 6)
        loss = (model(x) - x[:, :1]).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        metrics = {"loss": loss.item(), "weight_norm": model.weight.norm().item()}
        try:
            metrics = sync_metrics(metrics)
        except Exception:  # expect: RC105
            pass
        if dist.get_rank() == 0:
            print(epoch, metrics)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
