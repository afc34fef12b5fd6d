"""Fix for per-rank count vectors: the counts live in `torch.zeros(vocab_size)` from the shared tokenizer, the same length on every rank; only the values are local."""
import argparse
import glob
import json

import torch
import torch.distributed as dist


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--text-glob", default="text/*.txt")
    parser.add_argument("--vocab", default="vocab.json")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    with open(args.vocab) as f:
        vocab = json.load(f)
    files = sorted(glob.glob(args.text_glob))[rank::dist.get_world_size()]
    counts = torch.zeros(len(vocab))
    for path in files:
        with open(path) as f:
            for word in f.read().split():
                counts[vocab.get(word, 0)] += 1
    dist.all_reduce(counts)
    if rank == 0:
        print(f"{int(counts.sum().item())} tokens counted")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
