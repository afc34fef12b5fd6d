"""deepspeed.comm collectives are issued by every rank; only the print of the reduced value is on rank 0."""
import argparse

import deepspeed
import deepspeed.comm as dscomm
import torch
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)
    parser.add_argument("--steps", type=int, default=40)
    args = parser.parse_args()

    deepspeed.init_distributed(dist_backend="gloo")
    rank = dscomm.get_rank()
    model = nn.Linear(20, 20)
    opt = torch.optim.Adam(model.parameters())
    for step in range(args.steps):
        loss = model(torch.randn(4, 20)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        for p in model.parameters():
            dscomm.all_reduce(p.grad)
        opt.step()
        summed = loss.detach().reshape(1)
        dscomm.all_reduce(summed)
        if rank == 0 and step % 10 == 0:
            print(f"step {step}: loss {summed.item() / dscomm.get_world_size():.4f}")
    dscomm.barrier()


if __name__ == "__main__":
    main()
