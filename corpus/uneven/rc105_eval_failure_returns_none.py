"""evaluate() wraps a metric computation that all-reduces in a try and returns None on any error: a rank that fails leaves early and the others wait in the metric all_reduce."""
import argparse
import logging

import torch
import torch.distributed as dist
import torch.nn as nn

log = logging.getLogger(__name__)


def reduce_mean(value: float) -> float:
    t = torch.tensor([value])
    dist.all_reduce(t)
    return t.item() / dist.get_world_size()


def evaluate(model: nn.Module, path: str):
    try:
        data = torch.load(path)
        with torch.no_grad():
            loss = nn.functional.mse_loss(model(data["x"]), data["y"]).item()
        return reduce_mean(loss)
    except (OSError, KeyError, RuntimeError) as err:  # expect: RC105
        log.warning("evaluation skipped: %s", err)
        return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--val-dir", default="val")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = nn.Linear(10, 1)
    score = evaluate(model, f"{args.val_dir}/part{rank}.pt")
    if rank == 0:
        print(f"val loss {score}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
