"""Safe twin of fsdp2_save_second_moments_on_rank0: every rank calls
`save_second_moments_as_optimizer_pt` (its DTensor gathers need all of them); the function writes
the file from rank 0 itself.

Thread: https://github.com/EleutherAI/bergson/pull/376
"""
import argparse
import os

import torch
import torch.distributed as dist
from torch.distributed.fsdp import fully_shard

from optim_io import save_second_moments_as_optimizer_pt


def main(model, loader):
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="runs/finetune")
    parser.add_argument("--epochs", type=int, default=1)
    args = parser.parse_args()

    dist.init_process_group("nccl")
    global_rank = dist.get_rank()
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    for block in model.model.layers:
        fully_shard(block)
    fully_shard(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)

    for epoch in range(args.epochs):
        for batch in loader:
            loss = model(**batch).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()

    save_second_moments_as_optimizer_pt(model, optimizer, os.path.join(args.out, "optimizer.pt"))
    dist.destroy_process_group()
