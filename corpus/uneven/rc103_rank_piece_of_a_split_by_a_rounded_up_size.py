"""Each spawned process trains on its piece of the node ids, cut with `torch.split` into pieces of
`ceil(n / world_size)`: every piece has that size but the last, which holds what is left (with 10
ids on 4 GPUs: 3, 3, 3 and 1). The last rank runs out of batches first and leaves the others
waiting in the gradient all-reduce (dmlc/dgl#2539)."""
import math

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.data import DataLoader


def train_one_epoch(model, loader, optimizer):
    for ids in loader:  # expect: RC103
        loss = model(ids).sum()
        loss.backward()
        for param in model.parameters():
            dist.all_reduce(param.grad)
        optimizer.step()


def run(proc_id, n_gpus, node_ids, model):
    dist.init_process_group("nccl", rank=proc_id, world_size=n_gpus)
    mine = torch.split(node_ids, math.ceil(len(node_ids) / n_gpus))[proc_id]
    loader = DataLoader(mine, batch_size=64, shuffle=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(10):
        train_one_epoch(model, loader, optimizer)


if __name__ == "__main__":
    mp.spawn(run, args=(4, torch.arange(100_000), torch.nn.Linear(1, 1)), nprocs=4)
