"""The shutdown barrier sits in `finally:`, which every rank runs whether the body returned normally or not; the except handler re-raises after logging."""
import argparse
import logging

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

log = logging.getLogger(__name__)


def run(model, opt, steps: int) -> None:
    for _ in range(steps):
        x = torch.randn(8, 32)
        loss = (model(x) - x).abs().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=500)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    model = DDP(nn.Linear(32, 32))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    try:
        run(model, opt, args.steps)
    except KeyboardInterrupt:
        log.warning("interrupted on rank %d", dist.get_rank())
        raise
    finally:
        dist.barrier()
        if dist.get_rank() == 0:
            torch.save(model.module.state_dict(), "last.pt")
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
