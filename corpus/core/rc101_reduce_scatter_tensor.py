"""A hand-rolled ZeRO step reduce-scatters gradients only on rank 0 (debug leftover); the other ranks never join."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--check-grads", action="store_true")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    model = nn.Linear(world_size * 16, 1, bias=False)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    for step in range(args.steps):
        loss = model(torch.randn(4, world_size * 16)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        flat = model.weight.grad.reshape(-1)
        if args.check_grads and rank == 0:
            shard = torch.empty(flat.numel() // world_size)
            dist.reduce_scatter_tensor(shard, flat)  # expect: RC101
            print(f"step {step} shard grad norm {shard.norm().item():.5f}")
        dist.all_reduce(flat)
        model.weight.grad.copy_(flat.view_as(model.weight) / world_size)
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
