"""Evaluation splits the sample ids with `np.array_split(ids, world_size)[rank]`; the first shards are one sample longer, so those ranks run one more per-batch all_reduce than the others."""
import argparse

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--num-samples", type=int, default=1001)
    parser.add_argument("--batch-size", type=int, default=1)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    features = torch.load("eval_features.pt")
    labels = torch.load("eval_labels.pt")
    model = nn.Linear(features.shape[1], 10)
    model.load_state_dict(torch.load("model.pt"))
    model.eval()

    my_ids = np.array_split(np.arange(args.num_samples), world_size)[rank]
    correct = torch.zeros(2)
    with torch.no_grad():
        for i in my_ids:  # expect: RC103
            logits = model(features[int(i)].unsqueeze(0))
            batch_stats = torch.tensor([float(logits.argmax(1).item() == labels[int(i)].item()), 1.0])
            dist.all_reduce(batch_stats)
            correct += batch_stats
    if rank == 0:
        print(f"accuracy {correct[0].item() / correct[1].item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
