"""Gradient clipping over the model-parallel group (nanotron's clip_grad_norm): each rank counts
only the tied weights it owns, so the number of gradients differs per rank, but the norm of them
is one number (`torch.linalg.vector_norm` of the per-gradient norms), the shape every rank
all-reduces."""
import torch
import torch.distributed as dist


def clip_grad_norm(mp_pg, named_parameters, max_norm: float, norm_type: float = 2.0):
    named_parameters = list(named_parameters)
    world_rank = dist.get_rank()
    grads = [p.grad for _, p in named_parameters if not p.is_tied or world_rank == p.get_tied_info().global_ranks[0]]
    if len(grads) > 0:
        total_norm = torch.linalg.vector_norm(
            torch.stack([torch.linalg.vector_norm(g.detach(), ord=norm_type, dtype=torch.float) for g in grads]),
            ord=norm_type,
            dtype=torch.float,
        ).pow(norm_type)
    else:
        total_norm = torch.zeros([], dtype=torch.float)
    dist.all_reduce(total_norm, group=mp_pg, op=dist.ReduceOp.SUM)
    total_norm.pow_(1.0 / norm_type)
    clip_coef = torch.clamp(max_norm / (total_norm + 1.0e-6), max=1.0)
    for g in grads:
        g.mul_(clip_coef)
    return total_norm
