"""Rank 0 retries a download in a `while` loop on its rank and broadcasts the status each try; no other rank enters the loop."""
import argparse
import os
import urllib.request

import torch
import torch.distributed as dist
import torch.nn as nn


def try_download(url: str, dest: str) -> bool:
    try:
        urllib.request.urlretrieve(url, dest)
        return True
    except OSError:
        return False


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--weights-url", default="http://example.invalid/init.pt")
    parser.add_argument("--dest", default="init.pt")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    attempts = 0
    while rank == 0 and attempts < 3 and not os.path.exists(args.dest):
        ok = torch.tensor([int(try_download(args.weights_url, args.dest))])
        dist.broadcast(ok, src=0)  # expect: RC101
        attempts += 1

    model = nn.Linear(8, 8)
    if os.path.exists(args.dest):
        model.load_state_dict(torch.load(args.dest))
    out = model(torch.randn(2, 8))
    dist.all_reduce(out)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
