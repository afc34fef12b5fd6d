"""Rank 0 reads the run config and broadcasts it, but the receivers never call broadcast_object_list: rank 0 hangs."""
import argparse
import json

import torch
import torch.distributed as dist
import torch.nn as nn


def load_run_config(path: str, rank: int) -> dict:
    if rank == 0:
        with open(path) as f:
            payload = [json.load(f)]
        dist.broadcast_object_list(payload, src=0)  # expect: RC101
    else:
        payload = [None]
    return payload[0]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="run.json")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    cfg = load_run_config(args.config, rank)
    model = nn.Linear(cfg["in_features"], cfg["out_features"])
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"])
    for _ in range(cfg["steps"]):
        loss = model(torch.randn(8, cfg["in_features"])).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
