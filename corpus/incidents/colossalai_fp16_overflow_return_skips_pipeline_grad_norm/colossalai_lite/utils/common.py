"""Trimmed colossalai/utils/common.py: `clip_grad_norm_fp32` as it was before ColossalAI#1175
(tensor-parallel and ZeRO-sharded norms left out; the pipeline stages sum their partial norms)."""
import torch
import torch.distributed as dist

from colossalai_lite.context import ParallelMode
from colossalai_lite.core import global_context as gpc


def clip_grad_norm_fp32(parameters, max_norm, norm_type=2.0):
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    params = []
    for p in parameters:
        if p.grad is not None:
            assert p.grad.dtype == torch.float, f"expected fp32 grads, got {p.grad.type()}"
            params.append(p)

    if len(params) == 0:
        return 0.0  # expect: RC102

    max_norm = float(max_norm)
    norm_type = float(norm_type)
    local_norm = torch.zeros(1, device=params[0].grad.device)
    for p in params:
        local_norm += p.grad.detach().norm(norm_type) ** norm_type
    total_norm = local_norm.cuda()
    # each pipeline stage holds a different slice of the model: sum the partial norms
    if gpc.is_initialized(ParallelMode.PIPELINE) and gpc.get_world_size(ParallelMode.PIPELINE) > 1:
        dist.all_reduce(total_norm, op=dist.ReduceOp.SUM, group=gpc.get_group(ParallelMode.PIPELINE))
    total_norm = total_norm.item() ** (1.0 / norm_type)

    clip_coeff = max_norm / (total_norm + 1.0e-6)
    if clip_coeff < 1.0:
        for p in params:
            p.grad.detach().mul_(clip_coeff)
    return total_norm
