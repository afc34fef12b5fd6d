"""Meant to send from the leader, but `src=rank` is used where `rank == leader` no longer holds: after the test's arm has ended, and under a test against each node's own leader, which differs between nodes."""
import argparse

import torch
import torch.distributed as dist


def sync_from_leader(tensor: torch.Tensor, rank: int, leader: int) -> None:
    if rank == leader:
        tensor.mul_(2)
    dist.broadcast(tensor, src=rank)  # expect: RC104


def sync_from_node_leader(tensor: torch.Tensor, rank: int, gpus_per_node: int) -> None:
    node_leader = rank // gpus_per_node * gpus_per_node
    if rank == node_leader:
        dist.broadcast(tensor, src=rank)  # expect: RC104
    else:
        dist.broadcast(tensor, src=node_leader)  # expect: RC104


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    for _ in range(args.steps):
        sync_from_leader(torch.ones(4), rank, 0)
        sync_from_node_leader(torch.ones(4), rank, 8)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
