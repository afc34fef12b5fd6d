"""Fix for gathering variable-length predictions: all_gather_object pickles each rank's list, so the lengths may differ freely."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threshold", type=float, default=0.5)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    ds = TensorDataset(torch.arange(10000), torch.load("features.pt"))
    loader = DataLoader(ds, batch_size=256, sampler=DistributedSampler(ds, shuffle=False))
    model = nn.Linear(40, 1)
    model.load_state_dict(torch.load("detector.pt"))

    flagged = []
    with torch.no_grad():
        for ids, x in loader:
            scores = torch.sigmoid(model(x)).squeeze(-1)
            flagged.extend(ids[scores > args.threshold].tolist())

    per_rank = [None] * dist.get_world_size()
    dist.all_gather_object(per_rank, flagged)
    if dist.get_rank() == 0:
        merged = sorted({i for part in per_rank for i in part})
        torch.save(torch.tensor(merged), "flagged_ids.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
