"""The fix: every rank enters summon_full_params; only rank 0 prints."""
import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


def log_weight_norms(model: FSDP) -> None:
    with FSDP.summon_full_params(model, writeback=False):
        if dist.get_rank() == 0:
            for name, param in model.named_parameters():
                print(f"{name}: {param.norm().item():.4f}")


def main(module: torch.nn.Module) -> None:
    model = FSDP(module, use_orig_params=True)
    log_weight_norms(model)
