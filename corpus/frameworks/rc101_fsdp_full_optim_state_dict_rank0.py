"""The optimizer state of an FSDP model is consolidated on rank 0 only; full_optim_state_dict gathers
the sharded state from every rank, so they all must call it."""
import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


def save_optimizer(model: FSDP, optimizer: torch.optim.Optimizer, path: str) -> None:
    if dist.get_rank() == 0:
        osd = FSDP.full_optim_state_dict(model, optimizer)  # expect: RC101
        torch.save(osd, path)


def main(module: torch.nn.Module) -> None:
    model = FSDP(module)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    save_optimizer(model, optimizer, "optim.pt")
