"""The look-alike with the arms the wrong way round: when the job is distributed, rank 0
evaluates through the DDP wrapper itself (`model(x) if distributed else model.module(x)`), whose
forward broadcasts buffers from rank 0 to ranks that are not there: they are already in the next
epoch's forward."""
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--no_distributed", action="store_true")
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args()
    distributed = not args.no_distributed
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.BatchNorm1d(16))
    if distributed:
        dist.init_process_group("nccl")
        model = DDP(model.cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        model.train()
        for _ in range(100):
            loss = model(torch.randn(8, 16)).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if local_rank == 0:
            model.eval()
            with torch.no_grad():
                val = torch.randn(64, 16)
                out = model(val) if distributed else model.module(val)  # expect: RC101
            print(f"epoch {epoch}: val {out.pow(2).mean().item():.4f}")
