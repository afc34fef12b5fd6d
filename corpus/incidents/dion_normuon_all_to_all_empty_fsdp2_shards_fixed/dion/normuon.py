"""Distributed NorMuon optimizer for PyTorch FSDP2 (trimmed): same-shape matrix parameters are
grouped into one megabatch task; their momentum updates are computed on the local shards
(`to_local()` of the DTensor gradients and states) and orthogonalized together.

Part of the reconstruction of https://github.com/microsoft/dion/pull/74; see
dion/megabatch_base.py for the incident description.
"""
from collections import defaultdict
from typing import Callable, Generator, List, Optional, Tuple, Union

import torch
from torch import Tensor
from torch.distributed import ProcessGroup
from torch.distributed.tensor import DeviceMesh, DTensor
from torch.optim.optimizer import ParamsT

from .megabatch_base import DistributedOrthoBase, adjust_lr_spectral_norm, megabatch_orthogonalize_async
from .muon import muon_update_post_orthogonalize, muon_update_pre_orthogonalize
from .opt_utils import AsyncTask, to_local


class NorMuon(DistributedOrthoBase):
    """Distributed NorMuon. Use a DeviceMesh for FSDP2 and a ProcessGroup for DDP."""

    def __init__(
        self,
        params: ParamsT,
        distributed_mesh: Optional[Union[DeviceMesh, ProcessGroup]] = None,
        lr: float = 0.01,
        mu: float = 0.95,
        muon_beta2: float = 0.95,
        weight_decay: float = 0.01,
        epsilon: float = 1e-8,
        nesterov: bool = False,
        adjust_lr: Optional[str] = "spectral_norm",
        flatten: bool = False,
    ):
        defaults = dict(
            lr=lr,
            mu=mu,
            muon_beta2=muon_beta2,
            weight_decay=weight_decay,
            algorithm="normuon",
            step=0,
            epsilon=epsilon,
            nesterov=nesterov,
            flatten=flatten,
            adjust_lr=adjust_lr,
        )
        super().__init__(params, distributed_mesh, "normuon", defaults)

    def _get_or_initialize_state(self, param: Tensor, algo: str) -> dict:
        state = super()._get_or_initialize_state(param, algo)
        if algo == self._algo_name and "variance_neuron" not in state:
            state["variance_neuron"] = torch.zeros_like(param[..., 0:1])
        return state

    def _create_ortho_tasks(self, param_groups: List[dict]) -> Generator["AsyncTask", None, None]:
        """Groups ALL same-shape parameters into a single task to minimize communication rounds."""
        for group in param_groups:
            assert group["algorithm"] == self._algo_name
            group_params = [p for p in group["params"] if p.grad is not None]
            if not group_params:
                continue

            update_args = dict(
                lr=torch.tensor(group["lr"]),
                momentum=torch.tensor(group["mu"]),
                muon_beta2=torch.tensor(group["muon_beta2"]),
                weight_decay=torch.tensor(group["weight_decay"]),
                epsilon=torch.tensor(group["epsilon"]),
                nesterov=group["nesterov"],
                flatten=group["flatten"],
                adjust_lr=group["adjust_lr"],
                device_rank=self._device_rank,
                world_size=self._world_size,
                process_group=self._process_group,
                newton_schulz_func=self._newton_schulz_func,
            )

            shape_groups: dict = defaultdict(list)
            for p in group_params:
                sharding = p.placements if isinstance(p, DTensor) else None
                shape_groups[(p.shape, sharding, p.dtype)].append(p)

            for (_shape, _sharding, _dtype), params in shape_groups.items():
                gradients = [p.grad for p in params]
                states = [self._get_or_initialize_state(p, self._algo_name) for p in params]
                momentums = [s["momentum"] for s in states]
                variances_neuron = [s["variance_neuron"] for s in states]

                is_batch_sharded, is_matrix_sharded, sharded_tensor_dim = self._get_shard_info(params[0], group)
                megabatch_args = update_args
                if is_batch_sharded and not is_matrix_sharded:
                    megabatch_args = {**update_args, "process_group": None}

                yield AsyncTask(
                    normuon_update_megabatch_async(
                        X=params,
                        G=gradients,
                        M=momentums,
                        V=variances_neuron,
                        shard_dim=sharded_tensor_dim,
                        **megabatch_args,
                    )
                )


def normuon_update_megabatch_async(
    X: List[Tensor],
    G: List[Tensor],
    M: List[Tensor],
    V: List[Tensor],
    lr: Tensor,
    momentum: Tensor,
    muon_beta2: Tensor,
    weight_decay: Tensor,
    epsilon: Tensor,
    nesterov: bool,
    flatten: bool,
    adjust_lr: Optional[str],
    device_rank: int,
    world_size: int,
    shard_dim: Optional[int] = None,
    process_group: Optional[ProcessGroup] = None,
    newton_schulz_func: Optional[Callable] = None,
) -> Generator[None, None, None]:
    """Processes ALL same-shape parameters in one communication round."""
    N = len(X)
    assert N == len(G) == len(M) == len(V)

    # Pre-orthogonalize: update momentum (on this rank's local shards)
    U = muon_update_pre_orthogonalize(G=to_local(G), M=to_local(M), momentum=momentum, nesterov=nesterov)

    # Convert shard_dim to negative for comm_dim
    comm_dim = (shard_dim - X[0].ndim) if shard_dim is not None else None

    # Orthogonalize via shared megabatch communication
    U = yield from megabatch_orthogonalize_async(
        U,
        comm_dim=comm_dim,
        device_rank=device_rank,
        world_size=world_size,
        process_group=process_group,
        newton_schulz_func=newton_schulz_func,
        flatten=flatten,
        epsilon=epsilon,
    )

    # NorMuon normalization: per-neuron second moment of the orthogonalized update
    V_local = to_local(V)
    U_stacked = torch.stack(U).to(dtype=V_local[0].dtype)
    V_stacked = torch.stack(V_local)
    V_stacked.lerp_(U_stacked.square().mean(dim=-1, keepdim=True), 1 - muon_beta2)
    U_stacked = U_stacked / (V_stacked.sqrt() + 1e-8)
    for i in range(N):
        V_local[i].copy_(V_stacked[i])
    U = [U_stacked[i] for i in range(N)]

    adjusted_lr = adjust_lr_spectral_norm(lr, X[0].shape, flatten=flatten) if adjust_lr == "spectral_norm" else lr

    # Post-orthogonalize: apply update
    muon_update_post_orthogonalize(X=to_local(X), U=U, base_lr=lr, adjusted_lr=adjusted_lr, weight_decay=weight_decay)
