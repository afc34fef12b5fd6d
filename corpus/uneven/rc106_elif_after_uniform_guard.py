"""After a uniform dry-run check, an `elif rank == 0:` arm gathers the shard sizes with `gather` while the `else` arm all_gathers them: a rank-dependent branch whose two arms issue different collectives."""
import argparse
import glob

import torch
import torch.distributed as dist


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-glob", default="data/*.pt")
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    mine = sorted(glob.glob(args.data_glob))[rank::world_size]
    count = torch.tensor([len(mine)])
    if args.dry_run:
        print(f"rank {rank} would read {len(mine)} files")
    elif rank == 0:  # expect: RC106
        counts = [torch.zeros_like(count) for _ in range(world_size)]
        dist.gather(count, gather_list=counts, dst=0)
        print("files per rank:", [int(c) for c in counts])
    else:
        counts = [torch.zeros_like(count) for _ in range(world_size)]
        dist.all_gather(counts, count)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
