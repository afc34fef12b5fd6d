"""PENDING (catalog data, torch_parallel.toml): inspecting an FSDP model's full weights on rank 0
only; summon_full_params all-gathers the parameters on every rank, so rank 0 waits there alone.
It is a staticmethod called as `FSDP.summon_full_params(model)`, which the type's method entry misses."""
import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


def log_weight_norms(model: FSDP) -> None:
    if dist.get_rank() == 0:
        with FSDP.summon_full_params(model, writeback=False):  # expect: RC101
            for name, param in model.named_parameters():
                print(f"{name}: {param.norm().item():.4f}")


def main(module: torch.nn.Module) -> None:
    model = FSDP(module, use_orig_params=True)
    log_weight_norms(model)
