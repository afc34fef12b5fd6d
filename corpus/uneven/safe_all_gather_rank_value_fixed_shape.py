"""Each rank all_gathers `torch.tensor([rank, num_local])`: the values differ per rank, the shape (2,) does not, so the collective matches everywhere."""
import argparse
import glob

import torch
import torch.distributed as dist


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-glob", default="data/*.pt")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    mine = sorted(glob.glob(args.data_glob))[rank::world_size]
    info = torch.tensor([rank, len(mine)])
    table = [torch.zeros_like(info) for _ in range(world_size)]
    dist.all_gather(table, info)
    if rank == 0:
        for row in table:
            print(f"rank {int(row[0])} holds {int(row[1])} files")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
