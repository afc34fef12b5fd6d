"""CUDA is initialised in a setup function the entry calls first (`torch.cuda.set_device`), and
the worker count is a command-line option whose default is positive."""
import argparse
import os

import torch
from torch.utils.data import DataLoader


def setup():
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--num-workers", type=int, default=8)
    args = parser.parse_args()
    setup()
    loader = DataLoader(list(range(100)), num_workers=args.num_workers)  # expect: RC203
    for _ in loader:
        pass


main()
