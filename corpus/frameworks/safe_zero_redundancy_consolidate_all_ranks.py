"""The fix from the ZeroRedundancyOptimizer docs: every rank consolidates to rank 0; rank 0 saves."""
import torch
import torch.distributed as dist
from torch.distributed.optim import ZeroRedundancyOptimizer
from torch.nn.parallel import DistributedDataParallel as DDP


def train(model: torch.nn.Module, loader, epochs: int, rank: int) -> None:
    ddp_model = DDP(model, device_ids=[rank])
    optimizer = ZeroRedundancyOptimizer(ddp_model.parameters(), optimizer_class=torch.optim.Adam, lr=1e-3)
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(ddp_model(x), y)
            loss.backward()
            optimizer.step()
        optimizer.consolidate_state_dict(to=0)
        if rank == 0:
            torch.save({"model": ddp_model.module.state_dict(), "optim": optimizer.state_dict()}, f"ckpt{epoch}.pt")


def main(model: torch.nn.Module, loader) -> None:
    train(model, loader, epochs=10, rank=dist.get_rank())
