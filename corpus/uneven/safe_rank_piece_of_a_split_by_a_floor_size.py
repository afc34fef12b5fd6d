"""Safe look-alike of rc103_rank_piece_of_a_split_by_a_rounded_up_size.py: the node ids are cut
into pieces of `n // world_size` (the remainder, if any, is a piece after the last rank's), so the
piece each rank picks by its rank has one size on every rank."""
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.data import DataLoader


def train_one_epoch(model, loader, optimizer):
    for ids in loader:
        loss = model(ids).sum()
        loss.backward()
        for param in model.parameters():
            dist.all_reduce(param.grad)
        optimizer.step()


def run(proc_id, n_gpus, node_ids, model):
    dist.init_process_group("nccl", rank=proc_id, world_size=n_gpus)
    mine = torch.split(node_ids, len(node_ids) // n_gpus)[proc_id]
    loader = DataLoader(mine, batch_size=64, shuffle=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(10):
        train_one_epoch(model, loader, optimizer)


if __name__ == "__main__":
    mp.spawn(run, args=(4, torch.arange(100_000), torch.nn.Linear(1, 1)), nprocs=4)
