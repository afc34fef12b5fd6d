"""Only rank 0 reads the resume offset, so only rank 0 `continue`s past old steps and skips comm.reduce_mean()'s all_reduce."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn

from comm import reduce_mean
from resume import load_resume_step


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ckpt-dir", default="ckpt")
    parser.add_argument("--steps", type=int, default=1000)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    start_step = load_resume_step(args.ckpt_dir) if rank == 0 else 0
    model = nn.Linear(20, 20)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(args.steps):
        if step < start_step:
            continue  # expect: RC102
        loss = model(torch.randn(4, 20)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        avg = reduce_mean(loss)
        if rank == 0 and step % 100 == 0:
            print(f"step {step}: loss {avg.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
