"""An expert-parallel token exchange (all_to_all_single) is skipped by every rank except the one that owns expert 0."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


class TinyExpertLayer(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.expert = nn.Linear(dim, dim)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        routed = torch.empty_like(tokens)
        if dist.get_rank() == 0:
            dist.all_to_all_single(routed, tokens)  # expect: RC101
        else:
            routed = tokens
        return self.expert(routed)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dim", type=int, default=32)
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    layer = TinyExpertLayer(args.dim)
    opt = torch.optim.Adam(layer.parameters())
    for _ in range(args.steps):
        tokens = torch.randn(dist.get_world_size() * 4, args.dim)
        loss = layer(tokens).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
