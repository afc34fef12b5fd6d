"""Safe look-alike of rc103_ddp_wrapped_when_distributed_passed_to_a_helper: the same conditional
DDP wrap and epoch helper, but each rank's batches come from a DistributedSampler's padded share,
as many on every rank."""
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from engine import train_one_epoch


class Regressor(torch.nn.Module):
    def forward(self, x):
        return x.sum(-1)


def run(proc_id, n_gpus, features, labels):
    dist.init_process_group("nccl", rank=proc_id, world_size=n_gpus)
    samples = TensorDataset(features, labels)
    loader = DataLoader(samples, batch_size=32, sampler=DistributedSampler(samples))
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
