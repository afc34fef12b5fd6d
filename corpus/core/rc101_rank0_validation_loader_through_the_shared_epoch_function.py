"""The look-alike of safe_rank0_validation_loader_through_the_shared_epoch_function.py before the
fix: rank 0 validates through the shared epoch function with the DDP model itself, whose forward
broadcasts buffers to ranks that are already waiting in the barrier (jpata/particleflow#233)."""
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
                loss = model(batch).mean()
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
            print(validation_run(model, valid_loader))  # expect: RC101
        dist.barrier()
