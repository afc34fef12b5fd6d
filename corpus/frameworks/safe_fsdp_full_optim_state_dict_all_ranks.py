"""The fix: every rank calls full_optim_state_dict (rank0_only=True returns it on rank 0 only);
rank 0 saves."""
import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


def save_optimizer(model: FSDP, optimizer: torch.optim.Optimizer, path: str) -> None:
    osd = FSDP.full_optim_state_dict(model, optimizer, rank0_only=True)
    if dist.get_rank() == 0:
        torch.save(osd, path)


def main(module: torch.nn.Module) -> None:
    model = FSDP(module)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    save_optimizer(model, optimizer, "optim.pt")
