"""torch_distributed_zero_first() puts a barrier on complementary ranks before and after the yield: one barrier per rank."""
import argparse
import os
from contextlib import contextmanager

import torch
import torch.distributed as dist
import torch.nn as nn


@contextmanager
def torch_distributed_zero_first(local_rank: int):
    if local_rank != 0:
        dist.barrier()
    yield
    if local_rank == 0:
        dist.barrier()


def download_weights(path: str) -> None:
    if not os.path.exists(path):
        torch.save(nn.Linear(16, 16).state_dict(), path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--weights", default="pretrained.pt")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    local_rank = int(os.environ["LOCAL_RANK"])
    with torch_distributed_zero_first(local_rank):
        download_weights(args.weights)
    model = nn.Linear(16, 16)
    model.load_state_dict(torch.load(args.weights))
    opt = torch.optim.Adam(model.parameters())
    for _ in range(20):
        loss = model(torch.randn(4, 16)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
