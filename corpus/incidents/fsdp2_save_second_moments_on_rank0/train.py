"""Training entry point of an FSDP2 (fully_shard) fine-tune that, at the end, exports the Adam
second moments for later influence computations -- from global rank 0 only.

Thread: https://github.com/EleutherAI/bergson/pull/376 ("fix: call save_second_moments_as_optimizer_pt from every rank")
Project: EleutherAI/bergson
What hung: "Gathering FSDP's sharded (DTensor) moments is a collective, so gating the call on
`global_rank == 0` hangs non-zero ranks. The function already restricts the file write to rank 0
internally." `DTensor.full_tensor()` is an all-gather; rank 0 entered it alone.
Fix (the PR): call `save_second_moments_as_optimizer_pt` from every rank.
Expected rankcheck finding: RC101 on the guarded call, which reaches `DTensor.full_tensor()`.
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

    if global_rank == 0:
        save_second_moments_as_optimizer_pt(model, optimizer, os.path.join(args.out, "optimizer.pt"))  # expect: RC101
    dist.destroy_process_group()
