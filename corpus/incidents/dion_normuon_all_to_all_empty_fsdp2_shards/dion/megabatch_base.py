"""Shared base of dion's distributed orthogonalization optimizers (NorMuon, Dion2) and the
"megabatch" orthogonalization: every same-shape matrix parameter of a group is orthogonalized in
one communication round. Under FSDP2 (row-sharded DTensors) each rank all-to-alls its local row
shards so that every rank assembles whole matrices for a slice of the batch, runs Newton-Schulz,
and all-to-alls the rows back.

Thread: https://github.com/microsoft/dion/pull/74 ("Fix megabatch_orthogonalize_async hang on empty FSDP2 shards")
Project: microsoft/dion
What hung: "`megabatch_orthogonalize_async` hangs at NCCL `dist.all_to_all` whenever a managed 2D
weight's sharded global dim is smaller than `world_size` or doesn't divide evenly to fill all
ranks under FSDP2's contiguous chunking." A `(num_attention_heads=18, hidden=2304)` gate under
`dp_shard_size=8`: ranks 0-5 hold `(3, 2304)` shards, ranks 6-7 `(0, 2304)`; "Each rank constructs
`input_chunks` from its own local data, so per-target chunk shapes diverge across ranks
(`(per_rank, 3, 2304)` vs `(per_rank, 0, 2304)`). `dist.all_to_all` requires per-pair sizes to
match -- they don't." Watchdog: ranks 0-5 in ALLTOALL NumelIn=221184, ranks 6-7 one sequence
number ahead ("Padding-only ranks' zero-sized alltoall trivially completes locally").
Fix (the PR, merged): "pad each rank's local shard along comm_dim to a rank-consistent
padded_local_size = max(local_sizes) before the alltoall (one allreduce MAX), then narrow the
post-alltoall result back to the rank's original local size" (#75 later computes the same size as
ceil(global_dim / world_size) without the all-reduce).
Expected rankcheck finding: RC104 on the first `dist.all_to_all(output_chunks, input_chunks, ...)`,
whose chunks are stacked from each rank's own `to_local()` shards.
(Trimmed: Lion/AdamW tasks, Gram/Triton/Polar-Express Newton-Schulz variants, per-head splitting,
cautious weight decay and CUDA-graph capture are left out; Newton-Schulz is the plain quintic.)
"""
import math
from itertools import chain
from typing import Callable, Generator, List, Optional, Union

import torch
import torch.distributed as dist
from torch import Tensor
from torch.distributed import ProcessGroup
from torch.distributed.tensor import DeviceMesh, DTensor
from torch.optim.optimizer import Optimizer, ParamsT

from .opt_utils import AsyncRuntime, AsyncTask


def zeropower_via_newtonschulz5(G: Tensor, epsilon: float = 1e-7) -> Tensor:
    """Newton-Schulz iteration to approximate the orthogonalization of G (batched on dim 0)."""
    a, b, c = (3.4445, -4.7750, 2.0315)
    X = G.to(dtype=torch.bfloat16)
    transposed = G.size(-2) > G.size(-1)
    if transposed:
        X = X.mT
    X = X / (X.norm(dim=(-2, -1), keepdim=True) + epsilon)
    for _ in range(5):
        A = X @ X.mT
        B = b * A + c * A @ A
        X = a * X + B @ X
    if transposed:
        X = X.mT
    return X


class DistributedOrthoBase(Optimizer):
    """Distributed setup, step orchestration and shard detection shared by NorMuon and Dion2."""

    def __init__(self, params: ParamsT, distributed_mesh: Optional[Union[DeviceMesh, ProcessGroup]], algo_name: str, defaults: dict):
        super().__init__(params, defaults)
        self._algo_name = algo_name
        if isinstance(distributed_mesh, DeviceMesh):
            if distributed_mesh.ndim != 1:
                raise ValueError(f"Only 1D DeviceMesh supported, but got {distributed_mesh.ndim}D.")
            self._device_rank = distributed_mesh.get_local_rank()
            self._world_size = distributed_mesh.size()
            self._process_group = distributed_mesh.get_group()
        elif isinstance(distributed_mesh, ProcessGroup):
            self._device_rank = dist.get_rank(distributed_mesh)
            self._world_size = dist.get_world_size(distributed_mesh)
            self._process_group = distributed_mesh
        elif distributed_mesh is None:
            self._device_rank = 0
            self._world_size = 1
            self._process_group = None
        else:
            raise TypeError(f"Invalid distributed_mesh type: {type(distributed_mesh)}.")
        self._distributed_mesh = distributed_mesh
        self._newton_schulz_func = zeropower_via_newtonschulz5

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        ortho_groups = []
        for group in self.param_groups:
            group["step"] += 1
            if group["algorithm"] == self._algo_name:
                ortho_groups.append(group)
        ortho_tasks = self._create_ortho_tasks(ortho_groups)
        runtime = AsyncRuntime(chain(ortho_tasks), max_concurrent_tasks=3)
        runtime.run()
        return loss

    def _get_or_initialize_state(self, param: Tensor, algo: str) -> dict:
        state = self.state[param]
        if not state:
            state["momentum"] = torch.zeros_like(param)
        return state

    def _get_shard_info(self, param: Tensor, group: dict):
        """Returns (is_batch_sharded, is_matrix_sharded, sharded_tensor_dim)."""
        is_batch_sharded = False
        is_matrix_sharded = False
        sharded_tensor_dim = None
        if not isinstance(param, DTensor):
            return is_batch_sharded, is_matrix_sharded, sharded_tensor_dim
        shard_placements = [(i, p) for i, p in enumerate(param.placements) if p.is_shard() and param.device_mesh.size(i) > 1]
        if not group["flatten"]:
            matrix_dims = {param.ndim - 1, param.ndim - 2}
            is_batch_sharded = any(p.dim not in matrix_dims for _, p in shard_placements)
            shard_placements = [(i, p) for i, p in shard_placements if p.dim in matrix_dims]
        if len(shard_placements) == 1:
            is_matrix_sharded = True
            sharded_tensor_dim = shard_placements[0][1].dim
        elif len(shard_placements) > 1:
            raise NotImplementedError(f"{self.__class__.__name__} does not support parameters with multiple sharded dimensions.")
        return is_batch_sharded, is_matrix_sharded, sharded_tensor_dim

    def _create_ortho_tasks(self, param_groups: List[dict]) -> Generator["AsyncTask", None, None]:
        """Subclasses implement this to create orthogonalization tasks."""
        raise NotImplementedError


def megabatch_orthogonalize_async(
    U: List[Tensor],
    comm_dim: Optional[int],
    device_rank: int,
    world_size: int,
    process_group: Optional[ProcessGroup],
    newton_schulz_func: Callable,
    flatten: bool,
    epsilon: Tensor,
) -> Generator[None, None, List[Tensor]]:
    """
    Shared megabatch communication + Newton-Schulz orthogonalization. A generator that yields at
    async communication points; the caller recovers the result with
    ``result = yield from megabatch_orthogonalize_async(...)``.

    U: tensors to orthogonalize (all the same shape), the local shards under FSDP2.
    comm_dim: dimension for cat/split in all-to-all (negative index); None for non-sharded params.
    """
    N = len(U)

    # Pad to divisible by world_size (needed by both distributed paths)
    if process_group is not None and (N > 1 or comm_dim is not None):
        pad_n = (world_size - N % world_size) % world_size
        U_work = U + [torch.zeros_like(U[0])] * pad_n if pad_n > 0 else U
        N_total = len(U_work)
        per_rank = N_total // world_size
    else:
        U_work = U

    if comm_dim is not None and process_group is not None:
        # --- Mega-batched sharded FSDP2 path ---
        input_chunks = [
            torch.stack(U_work[r * per_rank : (r + 1) * per_rank])
            for r in range(world_size)
        ]

        output_chunks = [torch.empty_like(c) for c in input_chunks]
        work = dist.all_to_all(  # expect: RC104
            output_chunks, input_chunks, group=process_group, async_op=True
        )
        yield
        work.wait()

        # comm_dim is negative, so it correctly indexes the stacked tensor
        full_matrices = torch.cat(output_chunks, dim=comm_dim)
        full_matrices = muon_update_newton_schulz(
            full_matrices,
            newton_schulz_func=newton_schulz_func,
            flatten=flatten,
            epsilon=epsilon,
        )

        split_chunks = [
            s.contiguous()
            for s in torch.tensor_split(full_matrices, world_size, dim=comm_dim)
        ]

        recv_chunks = [torch.empty_like(c) for c in split_chunks]
        work = dist.all_to_all(
            recv_chunks, split_chunks, group=process_group, async_op=True
        )
        yield
        work.wait()

        result = [recv_chunks[r][i] for r in range(world_size) for i in range(per_rank)]
        return result[:N]

    elif N > 1 and process_group is not None:
        # --- Mega-batched non-sharded path ---
        start = device_rank * per_rank
        my_matrices = torch.stack(U_work[start : start + per_rank])
        my_matrices = muon_update_newton_schulz(my_matrices, newton_schulz_func=newton_schulz_func, flatten=flatten, epsilon=epsilon)
        all_chunks = [torch.empty_like(my_matrices) for _ in range(world_size)]
        work = dist.all_gather(all_chunks, my_matrices.contiguous(), group=process_group, async_op=True)
        yield
        work.wait()
        result = [all_chunks[r][i] for r in range(world_size) for i in range(per_rank)]
        return result[:N]

    elif N == 1:
        return [muon_update_newton_schulz(U[0], newton_schulz_func=newton_schulz_func, flatten=flatten, epsilon=epsilon)]

    else:
        # N > 1, no process_group (single GPU or batch-sharded 3D)
        stacked = muon_update_newton_schulz(torch.stack(U), newton_schulz_func=newton_schulz_func, flatten=flatten, epsilon=epsilon)
        return [stacked[i] for i in range(N)]


def muon_update_newton_schulz(X: Tensor, newton_schulz_func: Callable, flatten: bool, epsilon: Tensor) -> Tensor:
    """Flatten the input tensor if needed and call the Newton-Schulz function."""
    original_shape = X.shape
    if flatten and X.ndim >= 3:
        X = X.flatten(start_dim=1)
    elif X.ndim >= 4:
        X = X.flatten(end_dim=-3)
    return newton_schulz_func(X, epsilon=epsilon).reshape(original_shape)


def adjust_lr_spectral_norm(lr, param_shape, flatten):
    """Adjust from spectral norm 1 to RMS operator norm 1."""
    if flatten:
        fan_out = param_shape[0]
        fan_in = math.prod(param_shape[1:])
    else:
        fan_out, fan_in = param_shape[-2:]
    return lr * math.sqrt(fan_out / fan_in)
