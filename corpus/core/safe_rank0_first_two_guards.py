"""The "rank 0 first" idiom: workers wait in a barrier while rank 0 builds the cache, then rank 0 releases them; one barrier each."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn


def prepare_dataset(root: str) -> torch.Tensor:
    path = os.path.join(root, "train.pt")
    if not os.path.exists(path):
        os.makedirs(root, exist_ok=True)
        torch.save(torch.randn(4096, 12), path)
    return torch.load(path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-root", default="data")
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    if rank != 0:
        dist.barrier()  # the others wait ...
    data = prepare_dataset(args.data_root)  # ... while rank 0 builds the cache
    if rank == 0:
        dist.barrier()  # rank 0 releases them

    model = nn.Linear(12, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(args.steps):
        loss = model(data[step * 32:(step + 1) * 32]).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
