"""Rank 0 uploads the artifacts while the `else` arm makes every other rank wait in a barrier rank 0 never issues."""
import argparse
import shutil

import torch
import torch.distributed as dist
import torch.nn as nn


def upload(src: str, dest: str) -> None:
    shutil.copy(src, dest)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--upload-to", default="/mnt/artifacts/model.pt")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = nn.Linear(7, 7)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(args.steps):
        loss = model(torch.randn(3, 7)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()

    if rank == 0:
        torch.save(model.state_dict(), "model.pt")
        upload("model.pt", args.upload_to)
    else:
        dist.barrier()  # expect: RC101
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
