"""Collective helpers (trimmed from examples/commons/ops/collective_ops.py).

Part of the fixed twin of the reconstruction of https://github.com/NVIDIA/recsys-examples/issues/361;
see commons/distributed/batch_allgather.py for the incident.
"""
from typing import List, Optional

import torch
import torch.distributed as dist
from torchrec.sparse.jagged_tensor import KeyedJaggedTensor


def _gather_along_first_dim(input_, pg: Optional[dist.ProcessGroup] = None):
    world_size = dist.get_world_size(pg)
    if world_size == 1:
        return input_
    dim_size = list(input_.size())
    dim_size[0] = dim_size[0] * world_size
    output = torch.empty(dim_size, dtype=input_.dtype, device=torch.cuda.current_device())
    dist.all_gather_into_tensor(output, input_.contiguous(), group=pg)
    return output


def _split_along_first_dim(input_, pg: Optional[dist.ProcessGroup] = None):
    world_size = dist.get_world_size(pg)
    if world_size == 1:
        return input_
    local_dim_size = input_.size(0) // world_size
    offset = dist.get_rank(pg) * local_dim_size
    return input_[offset: offset + local_dim_size].contiguous()


class AllGatherFirstDimFromRegion(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input_, pg):
        ctx.pg = pg
        return _gather_along_first_dim(input_, pg)

    @staticmethod
    def backward(ctx, grad_output):
        return _split_along_first_dim(grad_output, ctx.pg), None


gather_along_first_dim = AllGatherFirstDimFromRegion.apply


def _gatherv_along_first_dim(input_, pg: Optional[dist.ProcessGroup] = None):
    world_size = dist.get_world_size(pg)
    local_dim0 = torch.tensor([input_.size(0)], device=input_.device, dtype=torch.int64)
    all_dim0 = torch.empty(world_size, dtype=torch.int64, device=input_.device)
    dist.all_gather_into_tensor(all_dim0, local_dim0, group=pg)
    tensor_list = [
        torch.empty([int(d)] + list(input_.shape[1:]), dtype=input_.dtype, device=input_.device)
        for d in all_dim0.cpu()
    ]
    dist.all_gather(tensor_list, input_.contiguous(), group=pg)
    return torch.cat(tensor_list)


def keyed_jagged_tensor_list_allgather(kjts: List[KeyedJaggedTensor], pg=None) -> List[KeyedJaggedTensor]:
    outputs = []
    for kjt in kjts:
        lengths = _gatherv_along_first_dim(kjt.lengths(), pg)
        values = _gatherv_along_first_dim(kjt.values(), pg)
        outputs.append(KeyedJaggedTensor.from_lengths_sync(keys=kjt.keys(), values=values, lengths=lengths))
    return outputs
