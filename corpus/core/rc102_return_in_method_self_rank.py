"""Checkpointer.save() returns on `self.rank != 0` before broadcasting the checkpoint path, so rank 0 waits alone."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn


class Checkpointer:
    def __init__(self, out_dir: str):
        self.rank = dist.get_rank()
        self.out_dir = out_dir

    def save(self, model: nn.Module, step: int) -> None:
        if self.rank != 0:
            return  # expect: RC102
        os.makedirs(self.out_dir, exist_ok=True)
        path = os.path.join(self.out_dir, f"step{step}.pt")
        torch.save(model.state_dict(), path)
        announcement = [path]
        dist.broadcast_object_list(announcement, src=0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--save-every", type=int, default=100)
    parser.add_argument("--out", default="ckpt")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    ckpt = Checkpointer(args.out)
    model = nn.Linear(11, 11)
    opt = torch.optim.Adam(model.parameters())
    for step in range(1, args.steps + 1):
        loss = model(torch.randn(4, 11)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % args.save_every == 0:
            ckpt.save(model, step)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
