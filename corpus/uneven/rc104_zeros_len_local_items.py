"""Token-frequency counts are kept in `torch.zeros(len(local_vocab))`, a vocabulary built from this rank's shard; the all_reduce then sums tensors of different lengths across ranks."""
import argparse
import glob
from collections import Counter

import torch
import torch.distributed as dist


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--text-glob", default="text/*.txt")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    files = sorted(glob.glob(args.text_glob))[rank::dist.get_world_size()]
    counter = Counter()
    for path in files:
        with open(path) as f:
            counter.update(f.read().split())

    local_vocab = sorted(counter)
    counts = torch.zeros(len(local_vocab))
    for i, word in enumerate(local_vocab):
        counts[i] = counter[word]
    dist.all_reduce(counts)  # expect: RC104
    if rank == 0:
        print(f"{int(counts.sum().item())} tokens counted")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
