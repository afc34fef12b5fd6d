"""Expert-parallel dispatch runs the all_to_all only `if remote.numel() > 0`; a rank whose local batch routed no token to remote experts skips it and the others wait."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--capacity", type=int, default=16)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    router = nn.Linear(args.hidden, world_size)
    expert = nn.Linear(args.hidden, args.hidden)
    tokens = torch.randn(128, args.hidden)
    target = router(tokens).argmax(-1)
    remote = tokens[target != rank]
    if remote.numel() > 0:
        send = torch.zeros(world_size * args.capacity, args.hidden)
        send[: min(len(remote), send.shape[0])] = remote[: send.shape[0]]
        recv = torch.empty_like(send)
        dist.all_to_all_single(recv, send)  # expect: RC101
        tokens = torch.cat([tokens, expert(recv)])
    print(f"rank {rank}: {tokens.shape[0]} tokens after dispatch")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
