"""Each spawned process trains on its piece of the samples, cut into pieces of the rounded-up
size (the last one short), and wraps the model in DDP only when there is more than one process.
The epoch helper's backward all-reduces the gradients once per batch; the rank with the short
piece runs out of batches first and leaves the others waiting (the shape of dmlc/dgl#2539)."""
import math

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset

from engine import train_one_epoch


class Regressor(torch.nn.Module):
    def forward(self, x):
        return x.sum(-1)


def run(proc_id, n_gpus, features, labels):
    dist.init_process_group("nccl", rank=proc_id, world_size=n_gpus)
    per_rank = math.ceil(len(features) / n_gpus)
    mine = TensorDataset(torch.split(features, per_rank)[proc_id], torch.split(labels, per_rank)[proc_id])
    loader = DataLoader(mine, batch_size=32)
    model = Regressor()
    if n_gpus > 1:
        model = DistributedDataParallel(model, device_ids=[proc_id])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        steps = train_one_epoch(model, loader, optimizer)
        if proc_id == 0:
            print(f"epoch {epoch}: {steps} steps")


if __name__ == "__main__":
    mp.spawn(run, args=(4, torch.randn(1000, 8), torch.randn(1000)), nprocs=4)
