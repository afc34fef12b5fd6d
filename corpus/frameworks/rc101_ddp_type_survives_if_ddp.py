"""nanoGPT's shape: the model is wrapped in DDP only `if ddp:`, and only the master process runs
the evaluation, whose forward goes through the (maybe) DDP model: under DDP each forward
broadcasts the buffers from rank 0, which the other ranks, already training, never join."""
import os

import torch
from torch.distributed import init_process_group
from torch.nn.parallel import DistributedDataParallel as DDP

ddp = int(os.environ.get("RANK", -1)) != -1
if ddp:
    init_process_group(backend="gloo")
    ddp_rank = int(os.environ["RANK"])
    master_process = ddp_rank == 0
else:
    master_process = True

model = torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.BatchNorm1d(32), torch.nn.Linear(32, 8))
if ddp:
    model = DDP(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
eval_interval, max_iters = 100, 1000


@torch.no_grad()
def estimate_loss():
    model.eval()
    losses = torch.zeros(10)
    for k in range(10):
        losses[k] = model(torch.randn(16, 32)).pow(2).mean()
    model.train()
    return losses.mean()


for iter_num in range(max_iters):
    if iter_num % eval_interval == 0 and master_process:
        losses = estimate_loss()  # expect: RC101
        print(f"step {iter_num}: val loss {losses:.4f}")
    loss = model(torch.randn(16, 32)).pow(2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
