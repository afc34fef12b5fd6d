"""Non-zero ranks `continue` only after the iteration's last collective; what they skip is rank 0's logging and saving."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--save-every", type=int, default=100)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    model = nn.Linear(12, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(args.steps):
        loss = model(torch.randn(8, 12)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
            p.grad /= world_size
        opt.step()
        reported = loss.detach().reshape(1)
        dist.all_reduce(reported)
        if rank != 0:
            continue
        print(f"step {step}: loss {reported.item() / world_size:.4f}")
        if step % args.save_every == 0:
            torch.save(model.state_dict(), f"step{step}.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
