"""The same clipping with the per-gradient norms all-reduced as they are: one entry per gradient
this rank owns, a different length on the rank that owns the tied embedding."""
import torch
import torch.distributed as dist


def clip_grad_norm(mp_pg, named_parameters, max_norm: float, norm_type: float = 2.0):
    named_parameters = list(named_parameters)
    world_rank = dist.get_rank()
    grads = [p.grad for _, p in named_parameters if not p.is_tied or world_rank == p.get_tied_info().global_ranks[0]]
    norms = torch.stack([torch.linalg.vector_norm(g.detach(), ord=norm_type, dtype=torch.float) for g in grads]).pow(norm_type)
    dist.all_reduce(norms, group=mp_pg, op=dist.ReduceOp.SUM)  # expect: RC104
    total_norm = norms.sum().pow(1.0 / norm_type)
    clip_coef = torch.clamp(max_norm / (total_norm + 1.0e-6), max=1.0)
    for g in grads:
        g.mul_(clip_coef)
    return total_norm
