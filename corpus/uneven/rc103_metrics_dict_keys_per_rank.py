"""Per-class metrics are all-reduced by looping over the local dict, whose keys are the classes this rank happened to see; ranks loop a different number of times and their all_reduces pair up wrongly or hang."""
import argparse
from collections import defaultdict

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    dataset = torch.load("val.pt")  # list of (features, label)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=DistributedSampler(dataset, shuffle=False))
    model = nn.Linear(48, 20)
    model.load_state_dict(torch.load("model.pt"))

    per_class = defaultdict(lambda: torch.zeros(2))
    with torch.no_grad():
        for x, y in loader:
            pred = model(x).argmax(1)
            for label, hit in zip(y.tolist(), (pred == y).tolist()):
                per_class[label] += torch.tensor([float(hit), 1.0])

    for label, stats in sorted(per_class.items()):  # expect: RC103
        dist.all_reduce(stats)
        if dist.get_rank() == 0:
            print(f"class {label}: recall {stats[0].item() / stats[1].item():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
