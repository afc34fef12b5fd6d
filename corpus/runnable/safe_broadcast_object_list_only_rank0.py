"""Rank 0 builds the run config; every rank calls broadcast_object_list, the receivers with a
placeholder that the broadcast fills in."""
import torch
import torch.distributed as dist
import torch.nn as nn

DEFAULTS = {"in_features": 8, "out_features": 2, "lr": 0.1, "steps": 3}


def load_run_config(rank: int) -> dict:
    payload = [dict(DEFAULTS, lr=0.05) if rank == 0 else None]
    dist.broadcast_object_list(payload, src=0)
    return payload[0]


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    cfg = load_run_config(rank)
    model = nn.Linear(cfg["in_features"], cfg["out_features"])
    lr = cfg["lr"]
    for _ in range(cfg["steps"]):
        loss = model(torch.randn(8, cfg["in_features"])).pow(2).mean()
        model.zero_grad()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * p.grad
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
