"""The same mutually recursive walk over nested modules, run on every rank; only the print is rank
0's."""
import torch
import torch.distributed as dist
import torch.nn as nn


def sync_module(module):
    for child in module.children():
        sync_children(child)
    for buffer in module.buffers(recurse=False):
        dist.all_reduce(buffer)


def sync_children(module):
    if len(list(module.children())) > 0:
        sync_module(module)


def main():
    dist.init_process_group("gloo")
    model = nn.Sequential(nn.BatchNorm1d(4), nn.Sequential(nn.BatchNorm1d(4), nn.Linear(4, 2)))
    model(torch.randn(8, 4))
    sync_children(model)
    if dist.get_rank() == 0:
        print("running means synced")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
