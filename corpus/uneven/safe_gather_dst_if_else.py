"""Shard sizes collected with `gather`: rank 0 passes the gather_list, the others pass none, but both arms issue the same collective with the same dst, which is what gather requires."""
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
    count = torch.tensor([len(mine)])
    if rank == 0:
        counts = [torch.zeros_like(count) for _ in range(world_size)]
        dist.gather(count, gather_list=counts, dst=0)
        print("files per rank:", [int(c) for c in counts])
    else:
        dist.gather(count, dst=0)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
