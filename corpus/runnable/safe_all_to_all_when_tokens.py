"""Every rank exchanges its token counts and then the tokens, even when it routed none."""
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
    send_counts = torch.tensor([tokens.shape[0] // world_size] * world_size)
    recv_counts = torch.zeros_like(send_counts)
    dist.all_to_all_single(recv_counts, send_counts)
    received = torch.zeros(int(recv_counts.sum()), 4)
    dist.all_to_all_single(
        received,
        tokens,
        output_split_sizes=recv_counts.tolist(),
        input_split_sizes=send_counts.tolist(),
    )
    out = expert(received).detach()
    summary = torch.tensor([float(out.shape[0])])
    dist.all_reduce(summary)
    if rank == 0:
        print(f"{int(summary.item())} tokens processed on {world_size} ranks")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
