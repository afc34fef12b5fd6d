"""An IterableDataset reads only `files[rank::world_size]`; the shards hold different numbers of lines, so the DataLoader loop ends at different steps and DDP's backward all_reduce hangs."""
import argparse
import glob
import json

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, IterableDataset


class JsonlStream(IterableDataset):
    def __init__(self, files, rank: int, world_size: int):
        self.files = files[rank::world_size]

    def __iter__(self):
        for path in self.files:
            with open(path) as f:
                for line in f:
                    row = json.loads(line)
                    yield torch.tensor(row["x"], dtype=torch.float32), torch.tensor(row["y"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-glob", default="corpus/part-*.jsonl")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    stream = JsonlStream(sorted(glob.glob(args.data_glob)), dist.get_rank(), dist.get_world_size())
    loader = DataLoader(stream, batch_size=32)
    model = DDP(nn.Linear(100, 7))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:  # expect: RC103
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
