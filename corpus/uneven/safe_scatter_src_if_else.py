"""Work assignment with `scatter`: rank 0 builds the scatter_list and the others pass None, but both arms call the same scatter with src=0 and same-shaped tensors."""
import argparse

import torch
import torch.distributed as dist


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=64)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    per_rank = args.jobs // world_size
    mine = torch.empty(per_rank, dtype=torch.long)
    if rank == 0:
        order = torch.randperm(args.jobs)[: per_rank * world_size]
        dist.scatter(mine, scatter_list=list(order.chunk(world_size)), src=0)
    else:
        dist.scatter(mine, scatter_list=None, src=0)
    print(f"rank {rank} runs jobs {mine.tolist()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
