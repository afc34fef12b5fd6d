"""Muon momentum update before and weight update after orthogonalization (trimmed).

Part of the reconstruction of https://github.com/microsoft/dion/pull/74; see
dion/megabatch_base.py for the incident description.
"""
from typing import List

import torch
from torch import Tensor


def muon_update_pre_orthogonalize(G: List[Tensor], M: List[Tensor], momentum: Tensor, nesterov: bool) -> List[Tensor]:
    """Update momentum with gradient and compute the input to orthogonalization (local tensors)."""
    dtype = M[0].dtype
    G = [g.to(dtype=dtype) for g in G]
    torch._foreach_mul_(M, momentum)
    torch._foreach_add_(M, G)
    if nesterov:
        U = torch._foreach_mul(M, momentum)
        torch._foreach_add_(U, G)
    else:
        U = M
    # Convert to bfloat16 before communication
    return [u.to(dtype=torch.bfloat16) for u in U]


def muon_update_post_orthogonalize(X: List[Tensor], U: List[Tensor], base_lr: Tensor, adjusted_lr: Tensor, weight_decay: Tensor) -> None:
    """Apply weight decay and weight update after orthogonalization (local tensors)."""
    torch._foreach_mul_(X, 1 - base_lr * weight_decay)
    U = torch._foreach_mul(U, adjusted_lr)
    torch._foreach_sub_(X, U)
