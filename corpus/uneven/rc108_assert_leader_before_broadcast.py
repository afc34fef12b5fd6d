"""Only the leader was meant to publish, but every rank calls `publish()`: the assert raises on the others, and the leader waits in the broadcast forever. After the assert `src=self.rank` is the leader's rank, the same everywhere; the assert is the one problem."""
import argparse

import torch
import torch.distributed as dist


class Publisher:
    def __init__(self, group) -> None:
        self.group = group
        self.rank = dist.get_rank()
        self.leader_rank = 0

    def publish(self, tensor: torch.Tensor) -> torch.Tensor:
        assert self.rank == self.leader_rank, f"rank {self.rank} is not the leader"  # expect: RC108
        dist.broadcast(tensor, src=self.rank, group=self.group)
        return tensor


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    publisher = Publisher(dist.new_group(list(range(dist.get_world_size()))))
    for _ in range(args.steps):
        publisher.publish(torch.ones(4))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
