"""Fix for all-reducing a per-rank metrics dict: the loop runs over the fixed class list from the config, and a class this rank never saw contributes zeros."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

NUM_CLASSES = 20


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    dataset = torch.load("val.pt")  # list of (features, label)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=DistributedSampler(dataset, shuffle=False))
    model = nn.Linear(48, NUM_CLASSES)
    model.load_state_dict(torch.load("model.pt"))

    per_class = {label: torch.zeros(2) for label in range(NUM_CLASSES)}
    with torch.no_grad():
        for x, y in loader:
            pred = model(x).argmax(1)
            for label, hit in zip(y.tolist(), (pred == y).tolist()):
                per_class[label] += torch.tensor([float(hit), 1.0])

    for label in range(NUM_CLASSES):
        stats = per_class[label]
        dist.all_reduce(stats)
        if dist.get_rank() == 0 and stats[1].item() > 0:
            print(f"class {label}: recall {stats[0].item() / stats[1].item():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
