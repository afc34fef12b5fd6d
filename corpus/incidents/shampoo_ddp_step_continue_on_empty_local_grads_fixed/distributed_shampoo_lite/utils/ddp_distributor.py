"""DDP distributor: blocks every parameter, assigns each block to one rank, and all-gathers the
updated blocks so that every rank ends the step with the full parameters."""
from typing import Any

import torch
import torch.distributed as dist
from torch import Tensor

from distributed_shampoo_lite.shampoo_types import PARAMS, DDPShampooConfig


def _distribute_buffer_sizes(buffer_sizes, group_size):
    """Greedy load balancing: the largest block goes to the least-loaded rank."""
    loads = [0] * group_size
    owners = [0] * len(buffer_sizes)
    for idx in sorted(range(len(buffer_sizes)), key=lambda i: -buffer_sizes[i]):
        rank = min(range(group_size), key=lambda r: loads[r])
        owners[idx] = rank
        loads[rank] += buffer_sizes[idx]
    return owners


class DDPDistributor:
    def __init__(self, param_group: dict[str, Any], distributed_config: DDPShampooConfig, max_block_dim: int) -> None:
        self._params: list[Tensor] = list(param_group[PARAMS])
        self._dtype = distributed_config.torch_dtype()
        self._communicate_params = distributed_config.communicate_params
        self._group_size = dist.get_world_size()
        self._group_rank = dist.get_rank()

        # Block every parameter along dim 0 into pieces of at most `max_block_dim` rows.
        self._global_blocks: list[tuple[int, slice]] = []
        for p_idx, p in enumerate(self._params):
            rows = p.shape[0] if p.dim() > 0 else 1
            for start in range(0, rows, max_block_dim):
                self._global_blocks.append((p_idx, slice(start, min(start + max_block_dim, rows))))
        sizes = [self._block_view(self._params, b).numel() for b in self._global_blocks]
        self._owners = _distribute_buffer_sizes(sizes, self._group_size)
        self._local_blocks = [b for b, r in zip(self._global_blocks, self._owners) if r == self._group_rank]

        # One int8 communication buffer per rank, padded to the largest per-rank payload.
        per_rank = [sum(s for s, r in zip(sizes, self._owners) if r == rank) for rank in range(self._group_size)]
        self._max_numel = max(per_rank)
        device = self._params[0].device
        self._global_dist_buffer = torch.zeros(self._max_numel * self._group_size, dtype=self._dtype, device=device)
        self._local_dist_buffer = self._global_dist_buffer.narrow(0, self._group_rank * self._max_numel, self._max_numel)
        self._local_grad_selector: tuple[bool, ...] = (True,) * len(self._local_blocks)

    @staticmethod
    def _block_view(tensors, block):
        p_idx, rows = block
        t = tensors[p_idx]
        return t[rows] if t.dim() > 0 else t.view(1)

    @property
    def local_blocked_params(self) -> tuple[Tensor, ...]:
        return tuple(self._block_view(self._params, b) for b in self._local_blocks)

    def merge_and_block_gradients(self) -> tuple[Tensor, ...]:
        """Blocked gradients of the blocks this rank owns, masked by gradient existence."""
        selector, grads = [], []
        for p_idx, rows in self._local_blocks:
            grad = self._params[p_idx].grad
            selector.append(grad is not None)
            if grad is not None:
                grads.append(grad[rows] if grad.dim() > 0 else grad.view(1))
        self._local_grad_selector = tuple(selector)
        return tuple(grads)

    @torch.no_grad()
    def all_gather_into_tensor(self) -> None:
        dist.all_gather_into_tensor(self._global_dist_buffer, self._local_dist_buffer)

    @torch.no_grad()
    def update_params(self, masked_blocked_search_directions: tuple[Tensor, ...]) -> None:
        """Pack this rank's search directions, exchange them, and apply every rank's blocks."""
        self._local_dist_buffer.zero_()
        offset = 0
        directions = iter(masked_blocked_search_directions)
        for block, has_grad in zip(self._local_blocks, self._local_grad_selector):
            numel = self._block_view(self._params, block).numel()
            if has_grad:
                self._local_dist_buffer.narrow(0, offset, numel).copy_(next(directions).reshape(-1))
            offset += numel

        self.all_gather_into_tensor()

        offsets = [0] * self._group_size
        for block, owner in zip(self._global_blocks, self._owners):
            target = self._block_view(self._params, block)
            start = owner * self._max_numel + offsets[owner]
            target.add_(self._global_dist_buffer.narrow(0, start, target.numel()).view_as(target).to(target.dtype))
            offsets[owner] += target.numel()
