"""The fix: every rank calls get_model_state_dict (cpu_offload keeps the full copy on rank 0 only);
rank 0 saves."""
import torch
import torch.distributed as dist
from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict
from torch.distributed.fsdp import fully_shard


def export(model: torch.nn.Module, path: str) -> None:
    full = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
    if dist.get_rank() == 0:
        torch.save(full, path)


def main(model: torch.nn.Module) -> None:
    for layer in model.layers:
        fully_shard(layer)
    fully_shard(model)
    export(model, "model.pt")
