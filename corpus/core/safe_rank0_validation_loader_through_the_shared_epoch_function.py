"""Every rank trains through `run_epoch` on its DistributedSampler share; rank 0 alone validates
through the same function on a loader only it builds, with no optimizer, so the function takes
its evaluation arm there (the unwrapped module: no collective). Judged on its own, `run_epoch`
loops over either loader: the validation call is rank 0's alone, and the lengths it passes are not
a reason for the training loop to be uneven (jpata/particleflow#233's fix)."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def run_epoch(model, loader, optimizer):
    is_train = optimizer is not None
    total = 0.0
    for batch in loader:
        if is_train:
            loss = model(batch).mean()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        else:
            with torch.no_grad():
                loss = model.module(batch).mean()
        total += loss.item()
    return total


def validation_run(model, loader):
    optimizer = None
    return run_epoch(model, loader, optimizer)


def main(rank, train_set, valid_set, net, epochs):
    dist.init_process_group("nccl")
    model = DDP(net.cuda(rank), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_loader = DataLoader(train_set, batch_size=32, sampler=DistributedSampler(train_set))
    valid_loaders = []
    for split in valid_set:
        if rank == 0:  # validation on a single process
            valid_loaders.append(DataLoader(split, batch_size=32))
    valid_loader = [batch for loader in valid_loaders for batch in loader]
    for _ in range(epochs):
        run_epoch(model, train_loader, optimizer)
        if rank == 0:
            print(validation_run(model, valid_loader))
        dist.barrier()
