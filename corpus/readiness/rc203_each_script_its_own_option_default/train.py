"""Two scripts define `--workers`: this one defaults to 6 and moves the model to the GPU first."""
import argparse

import torch
from torch.utils.data import DataLoader


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("-j", "--workers", type=int, default=6)
    args = parser.parse_args()
    model = torch.nn.Linear(2, 2).cuda()
    loader = DataLoader(list(range(8)), num_workers=args.workers)  # expect: RC203
    return model, loader


if __name__ == "__main__":
    main()
