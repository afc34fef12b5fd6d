"""Fix for MoE dispatch: every rank exchanges its per-destination token counts first, then always calls all_to_all_single with those split sizes (zero-sized splits are fine)."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hidden", type=int, default=64)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    router = nn.Linear(args.hidden, world_size)
    expert = nn.Linear(args.hidden, args.hidden)
    tokens = torch.randn(128, args.hidden)
    target = router(tokens).argmax(-1)
    order = torch.argsort(target)
    send = tokens[order]
    send_counts = torch.bincount(target, minlength=world_size)
    recv_counts = torch.empty_like(send_counts)
    dist.all_to_all_single(recv_counts, send_counts)
    recv = send.new_empty(int(recv_counts.sum().item()), args.hidden)
    dist.all_to_all_single(recv, send, output_split_sizes=recv_counts.tolist(), input_split_sizes=send_counts.tolist())
    out = expert(recv)
    print(f"rank {rank}: expert processed {out.shape[0]} tokens")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
