"""A DDP script that tears the process group down before rank 0 writes its final checkpoint
through a helper that ends with a barrier: after `destroy_process_group()` that barrier raises
("Default process group has not been initialized") on rank 0; the other ranks are not waiting in
anything. A crash to fix, not a hang."""
import os

import torch
import torch.distributed as dist


def save_checkpoint(model, path):
    torch.save(model.state_dict(), path)
    dist.barrier()


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(10):
        loss = model(torch.randn(4, 8)).sum()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()
    if rank == 0:
        save_checkpoint(model.module, os.path.join("out", "final.pt"))


if __name__ == "__main__":
    main()
