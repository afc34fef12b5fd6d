"""Every rank all-reduces the loss; only the printing and logging sit under `if rank == 0`."""
import argparse
import logging

import torch
import torch.distributed as dist
import torch.nn as nn

logger = logging.getLogger(__name__)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--log-every", type=int, default=20)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    model = nn.Linear(32, 8)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(args.steps):
        loss = model(torch.randn(16, 32)).logsumexp(1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        reported = loss.detach().clone()
        dist.all_reduce(reported)
        if rank == 0 and step % args.log_every == 0:
            logger.info("step %d loss %.4f", step, reported.item() / world_size)
            print(f"step {step} done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
