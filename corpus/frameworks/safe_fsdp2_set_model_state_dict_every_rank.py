"""The same load as torchtitan and torchtune write it: only rank 0 reads the file, and every rank
calls `set_model_state_dict` (the others with an empty dict), which broadcasts rank 0's tensors."""
import torch
import torch.distributed as dist
from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict
from torch.distributed.fsdp import fully_shard


def load_full(model, path):
    fully_shard(model)
    options = StateDictOptions(full_state_dict=True, broadcast_from_rank0=True)
    full = torch.load(path, map_location="cpu", mmap=True) if dist.get_rank() == 0 else {}
    set_model_state_dict(model, full, options=options)
    return model
