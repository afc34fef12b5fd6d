"""Mixture-of-experts dispatch: a rank exchanges tokens only when its router picked any, but
all_to_all_single is collective; rank 1 routed none and skips it. (Had every rank entered, the
sizes would still differ, 4 tokens against none, with no split sizes passed: RC104 too.)"""
import torch
import torch.distributed as dist
import torch.nn as nn


def route(rank: int, hidden: torch.Tensor) -> torch.Tensor:
    keep = 4 if rank == 0 else 0
    return hidden[:keep]


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    torch.manual_seed(10)
    expert = nn.Linear(4, 4)
    hidden = torch.randn(4, 4)
    tokens = route(rank, hidden)
    received = torch.zeros_like(tokens)
    if tokens.shape[0] > 0:
        dist.all_to_all_single(received, tokens)  # expect: RC101, RC104
    out = expert(received).detach()
    summary = torch.tensor([float(out.shape[0])])
    dist.all_reduce(summary)
    if rank == 0:
        print(f"{int(summary.item())} tokens processed on {world_size} ranks")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
