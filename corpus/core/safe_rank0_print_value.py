"""All ranks all-gather their sample counts; rank 0 then just prints the gathered values."""
import argparse

import torch
import torch.distributed as dist


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=1000)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    local = torch.tensor([args.samples // world_size + (rank < args.samples % world_size)])
    counts = [torch.zeros_like(local) for _ in range(world_size)]
    dist.all_gather(counts, local)
    if rank == 0:
        print("samples per rank:", [int(c.item()) for c in counts])
        print("total:", sum(int(c.item()) for c in counts))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
