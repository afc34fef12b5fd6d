"""Each rank loops over its own `np.array_split` shard of the recordings and calls steps.train_step(), which all-reduces gradients one module away; the shards differ in length, so the loop is uneven."""
import argparse
import os

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn

from steps import train_step


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", default="recordings")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    names = sorted(os.listdir(args.data_dir))
    mine = np.array_split(np.array(names), dist.get_world_size())[rank]
    model = nn.Sequential(nn.Conv1d(1, 8, 5), nn.ReLU(), nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(8, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for name in mine:  # expect: RC103
        rec = torch.load(os.path.join(args.data_dir, str(name)))
        loss = train_step(model, opt, rec["wave"], rec["target"])
        if rank == 0:
            print(f"{name}: {loss:.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
