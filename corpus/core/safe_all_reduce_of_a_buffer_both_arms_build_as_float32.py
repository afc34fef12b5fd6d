"""The look-alike of rc104_all_reduce_of_a_buffer_one_arm_casts_to_half.py where the arms differ
only in how they say float32 (`.float()`, `dtype=torch.float`, a factory's default) and where the
buffer goes (`.to(device)`): one dtype on every rank.
"""
import torch
import torch.distributed as dist


def reduce_grad_stats(model, device):
    norms = [p.grad.norm() for p in model.parameters() if p.grad is not None]
    total = torch.stack(norms).sum() if norms else torch.zeros(())
    if dist.get_rank() == 0:
        stats = torch.zeros(2).to(device)
    else:
        stats = torch.zeros(2, dtype=torch.float, device=device).float()
    stats[0] = total
    stats[1] = len(norms)
    dist.all_reduce(stats)
    return stats


def reduce_loss_pair(loss, aux):
    pair = torch.tensor([loss, aux], dtype=torch.float32) if dist.get_rank() == 0 else torch.tensor([loss, aux], dtype=torch.float)
    dist.all_reduce(pair)
    return pair
