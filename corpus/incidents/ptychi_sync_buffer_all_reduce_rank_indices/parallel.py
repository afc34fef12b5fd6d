"""Multi-process helpers of a pty-chi-style ptychographic reconstructor (one process per GPU,
torchrun, NCCL). Each rank takes a chunk of the scan positions; buffers are then made consistent
across ranks with `sync_buffer`.

Thread: https://github.com/AdvancedPhotonSource/pty-chi/pull/47 ("the all_reduce thing in parallel.py was having errors with different buffer lengths; this should fix this")
Project: AdvancedPhotonSource/pty-chi
What hung: with `indices` given, `sync_buffer` all-reduced the sliced view `buffer[indices]`.
The indices are the scan positions handled by this rank, and the chunks are not all the same
size, so the ranks entered the all-reduce with different shapes (the reporter's
TORCH_DISTRIBUTED_DEBUG fingerprints: TensorShape=[77, 1] on one rank, [100, 1] on the others)
and the job stopped there.
Fix (the PR; the same code is in parallel.py today, with the comment "For all_reduce, we need
consistent shapes across all ranks so we must operate on the full buffer, not sliced views"):
copy this rank's entries into a zero buffer of the full size, all-reduce the full buffer, and
write the indexed entries back.
Inferred: the caller (reconstructor.py) -- which buffer is synchronised with the rank's own
indices is not shown in the thread; a per-position quantity of the position correction is used.
Expected rankcheck finding: RC104 on the all-reduce of the per-rank slice.
"""
import os
from typing import Any, Optional

import numpy as np
import torch
import torch.distributed as dist
from torch import Tensor


def get_rank():
    return dist.get_rank() if dist.is_initialized() else 0


def get_world_size():
    return dist.get_world_size() if dist.is_initialized() else 1


class MultiprocessMixin:
    backend = "nccl"

    @property
    def rank(self) -> int:
        return get_rank()

    @property
    def n_ranks(self) -> int:
        return get_world_size()

    def init_process_group(self) -> None:
        if not dist.is_initialized() and "RANK" in os.environ:
            dist.init_process_group(backend=self.backend, init_method="env://")

    def get_chunk_of_current_rank(self, tensor: Tensor, return_chunk_sizes: bool = False):
        """Split along dim 0 with torch.chunk; the last chunks may be shorter."""
        chunks = torch.chunk(tensor, self.n_ranks, dim=0)
        chunk = chunks[self.rank] if self.rank < len(chunks) else tensor[:0]
        if return_chunk_sizes:
            return chunk, [len(c) for c in chunks]
        return chunk

    def sync_buffer(self, buffer: Any, indices: Optional[Tensor] = None,
                    source_rank: Optional[int] = None, op=dist.ReduceOp.SUM) -> Any:
        """All-reduce (or broadcast from `source_rank`) a buffer; with `indices`, only those
        elements are synchronised and the rest is left unchanged."""
        orig_type = type(buffer)
        if isinstance(buffer, (list, tuple, np.ndarray)):
            buffer = torch.as_tensor(np.asarray(buffer), device=torch.cuda.current_device())
        elif isinstance(buffer, (int, float)):
            buffer = torch.tensor([buffer], device=torch.cuda.current_device())
        squeeze = buffer.ndim == 0
        if squeeze:
            buffer = buffer.unsqueeze(0)

        slicer = slice(None) if indices is None else indices
        if source_rank is not None:
            dist.broadcast(buffer[slicer], src=source_rank)
        else:
            view = buffer[slicer]
            dist.all_reduce(view, op=op)  # expect: RC104
            buffer[slicer] = view

        if squeeze:
            buffer = buffer.squeeze(0)
        if orig_type in (int, float):
            return orig_type(buffer.item())
        if orig_type is np.ndarray:
            return buffer.cpu().numpy()
        if orig_type in (list, tuple):
            return orig_type(buffer.tolist())
        return buffer
