"""FSDP2 (fully_shard): the full state dict is requested on rank 0 only; get_model_state_dict with
full_state_dict=True gathers every shard and must run on every rank."""
import torch
import torch.distributed as dist
from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict
from torch.distributed.fsdp import fully_shard


def export(model: torch.nn.Module, path: str) -> None:
    if dist.get_rank() == 0:
        full = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))  # expect: RC101
        torch.save(full, path)


def main(model: torch.nn.Module) -> None:
    for layer in model.layers:
        fully_shard(layer)
    fully_shard(model)
    export(model, "model.pt")
