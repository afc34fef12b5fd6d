import torch

from .initialize import get_tensor_model_parallel_group
from .initialize import get_tensor_model_parallel_rank
from .initialize import get_tensor_model_parallel_world_size


def gather_split_1d_tensor(tensor):
    """Every member of the tensor-parallel group holds one slice; gather the whole."""
    world_size = get_tensor_model_parallel_world_size()
    numel = torch.numel(tensor)
    gathered = torch.empty(numel * world_size, dtype=tensor.dtype, device=tensor.device)
    chunks = [gathered[i * numel:(i + 1) * numel] for i in range(world_size)]
    torch.distributed.all_gather(chunks, tensor, group=get_tensor_model_parallel_group())
    return gathered
