"""`reduce = dist.all_reduce` hides the collective behind a local alias; calling it only on rank 0 still hangs."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=80)
    parser.add_argument("--log-every", type=int, default=20)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    reduce = dist.all_reduce
    model = nn.Linear(16, 4)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(args.steps):
        logits = model(torch.randn(8, 16))
        loss = nn.functional.cross_entropy(logits, torch.randint(0, 4, (8,)))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if rank == 0 and step % args.log_every == 0:
            summed = loss.detach().clone()
            reduce(summed)  # expect: RC101
            print(f"step {step} loss {summed.item() / dist.get_world_size():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
