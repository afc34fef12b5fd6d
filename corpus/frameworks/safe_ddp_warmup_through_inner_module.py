"""The fix: a rank-local warm-up goes through ddp_model.module (the plain module): no broadcast, and
its backward is not hooked by DDP."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main() -> None:
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3), torch.nn.BatchNorm2d(16), torch.nn.Flatten(), torch.nn.LazyLinear(10)).cuda()
    ddp_model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.1)
    if dist.get_rank() == 0:
        with torch.no_grad():
            ddp_model.module(torch.randn(4, 3, 32, 32, device="cuda"))
    for _ in range(100):
        loss = ddp_model(torch.randn(16, 3, 32, 32, device="cuda")).logsumexp(-1).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
