"""Gradient-norm statistics kept in half precision on the workers only (to save memory) while rank
0, which also logs them, keeps float32: both arms build a tensor of two elements, but rank 0's is
float32 and the others' float16, and the all-reduce they then share mismatches in dtype.
"""
import torch
import torch.distributed as dist


def reduce_grad_stats(model):
    norms = [p.grad.norm() for p in model.parameters() if p.grad is not None]
    total = torch.stack(norms).sum() if norms else torch.zeros(())
    if dist.get_rank() == 0:
        stats = torch.zeros(2, device=total.device)
    else:
        stats = torch.zeros(2, device=total.device).half()
    stats[0] = total
    stats[1] = len(norms)
    dist.all_reduce(stats)  # expect: RC104
    return stats


def reduce_loss_pair(loss, aux):
    pair = torch.tensor([loss, aux], dtype=torch.float32) if dist.get_rank() == 0 else torch.tensor([loss, aux], dtype=torch.bfloat16)
    dist.all_reduce(pair)  # expect: RC104
    return pair
