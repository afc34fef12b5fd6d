"""Loading a full checkpoint into an FSDP2 model "on rank 0 only, then broadcast": the broadcast is
`set_model_state_dict(..., broadcast_from_rank0=True)` itself, which every rank must call (rank 0
sends each tensor, the others receive). Called on rank 0 alone, it waits for ranks that never
join."""
import torch
import torch.distributed as dist
from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict
from torch.distributed.fsdp import fully_shard


def load_full(model, path):
    fully_shard(model)
    options = StateDictOptions(full_state_dict=True, broadcast_from_rank0=True)
    if dist.get_rank() == 0:
        full = torch.load(path, map_location="cpu", mmap=True)
        set_model_state_dict(model, full, options=options)  # expect: RC101
    return model
