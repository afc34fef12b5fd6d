"""The other script's `--workers` defaults to 0: its loader starts no workers, whatever train.py
gives the same option."""
import argparse

import torch
from torch.utils.data import DataLoader


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=0)
    args = parser.parse_args()
    model = torch.nn.Linear(2, 2).cuda()
    loader = DataLoader(list(range(8)), num_workers=args.workers)
    return model, loader


if __name__ == "__main__":
    main()
