"""Fix for sending from an elected leader: the leader broadcasts with `src=self.rank` (or `src=rank`) only in the arm where its rank equals the leader's, so that `src` is the leader's rank on every rank, the same the others pass."""
import argparse

import torch
import torch.distributed as dist


class Bridge:
    def __init__(self, group) -> None:
        self.group = group
        self.rank = dist.get_rank()
        self.leader_rank = 0

    def forward(self, tensor: torch.Tensor) -> torch.Tensor:
        if self.rank == self.leader_rank:
            dist.broadcast(tensor, src=self.rank, group=self.group)
        else:
            dist.broadcast(tensor, src=self.leader_rank, group=self.group)
        return tensor


def broadcast_from_each_owner(tensors, rank: int) -> None:
    for owner, tensor in enumerate(tensors):
        if rank != owner:
            dist.broadcast(tensor, src=owner)
        else:
            dist.broadcast(tensor, src=rank)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    bridge = Bridge(dist.new_group(list(range(dist.get_world_size()))))
    tensors = [torch.zeros(4) for _ in range(dist.get_world_size())]
    for _ in range(args.steps):
        bridge.forward(torch.ones(4))
        broadcast_from_each_owner(tensors, dist.get_rank())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
