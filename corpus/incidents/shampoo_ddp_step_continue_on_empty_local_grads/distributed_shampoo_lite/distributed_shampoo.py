"""DistributedShampoo optimizer (trimmed): blocked Kronecker-factored preconditioning, with the
per-block work split across ranks by the distributor."""
from typing import Any, Callable

import torch

from distributed_shampoo_lite.shampoo_types import (
    BETAS,
    DISTRIBUTOR,
    EPSILON,
    LR,
    MASKED_BLOCKED_GRADS,
    MASKED_BLOCKED_PARAMS,
    PARAMS,
    PRECONDITION_FREQUENCY,
    START_PRECONDITIONING_STEP,
    STEP,
    WEIGHT_DECAY,
    DDPShampooConfig,
)
from distributed_shampoo_lite.utils.ddp_distributor import DDPDistributor


class DistributedShampoo(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-2, betas=(0.9, 1.0), epsilon=1e-12, weight_decay=0.0, max_preconditioner_dim=1024,
                 precondition_frequency=1, start_preconditioning_step=1,
                 distributed_config: DDPShampooConfig | None = None) -> None:
        defaults = {
            LR: lr, BETAS: betas, EPSILON: epsilon, WEIGHT_DECAY: weight_decay,
            PRECONDITION_FREQUENCY: precondition_frequency, START_PRECONDITIONING_STEP: start_preconditioning_step,
        }
        super().__init__(params, defaults)
        config = distributed_config or DDPShampooConfig()
        self._per_group_state_lists: list[dict[str, Any]] = []
        for group in self.param_groups:
            distributor = DDPDistributor(group, config, max_preconditioner_dim)
            blocks = distributor.local_blocked_params
            self._per_group_state_lists.append({
                DISTRIBUTOR: distributor,
                STEP: torch.tensor(0),
                "factor_matrices": [(torch.zeros(b.shape[0], b.shape[0], device=b.device),
                                     torch.zeros(b[0].numel(), b[0].numel(), device=b.device)) if b.dim() > 1 else None
                                    for b in blocks],
                "grafting_state": [torch.zeros_like(b) for b in blocks],
            })

    @staticmethod
    def _mask_state_lists(state_lists: dict[str, Any]) -> None:
        selector = state_lists[DISTRIBUTOR]._local_grad_selector
        blocks = state_lists[DISTRIBUTOR].local_blocked_params
        state_lists[MASKED_BLOCKED_PARAMS] = tuple(b for b, keep in zip(blocks, selector) if keep)
        state_lists["masked_factor_matrices"] = [f for f, keep in zip(state_lists["factor_matrices"], selector) if keep]
        state_lists["masked_grafting_state"] = [g for g, keep in zip(state_lists["grafting_state"], selector) if keep]

    @torch.no_grad()
    def _compute_search_directions(self, state_lists, step, group) -> tuple[torch.Tensor, ...]:
        directions = []
        eps, beta2 = group[EPSILON], group[BETAS][1]
        precondition = step.item() >= group[START_PRECONDITIONING_STEP]
        for grad, param, factors, graft in zip(state_lists[MASKED_BLOCKED_GRADS], state_lists[MASKED_BLOCKED_PARAMS],
                                               state_lists["masked_factor_matrices"], state_lists["masked_grafting_state"]):
            if group[WEIGHT_DECAY] != 0.0:
                grad = grad.add(param, alpha=group[WEIGHT_DECAY])
            graft.mul_(beta2).addcmul_(grad, grad, value=1.0 if beta2 == 1.0 else 1.0 - beta2)
            adagrad_dir = grad / (graft.sqrt() + eps)
            if precondition and factors is not None:
                g2 = grad.reshape(grad.shape[0], -1)
                left, right = factors
                left.add_(g2 @ g2.T)
                right.add_(g2.T @ g2)
                l_inv = torch.linalg.matrix_power(left + eps * torch.eye(left.shape[0], device=left.device), -1)
                r_inv = torch.linalg.matrix_power(right + eps * torch.eye(right.shape[0], device=right.device), -1)
                shampoo_dir = (l_inv @ g2 @ r_inv).reshape_as(grad)
                shampoo_dir.mul_(adagrad_dir.norm() / (shampoo_dir.norm() + eps))
                directions.append(shampoo_dir.mul_(-group[LR]))
            else:
                directions.append(adagrad_dir.mul_(-group[LR]))
        return tuple(directions)

    @torch.no_grad()
    def _per_group_step(self, state_lists, step, group) -> None:
        # Updates parameters in distributed fashion: the DDP distributor all-gathers every
        # rank's updated blocks after the local updates.
        state_lists[DISTRIBUTOR].update_params(
            masked_blocked_search_directions=self._compute_search_directions(state_lists, step, group)
        )

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()

        for state_lists, group in zip(self._per_group_state_lists, self.param_groups, strict=True):
            # Construct blocked gradient list (only the blocks this rank owns).
            state_lists[MASKED_BLOCKED_GRADS] = state_lists[DISTRIBUTOR].merge_and_block_gradients()
            DistributedShampoo._mask_state_lists(state_lists)

            # Check if gradient list is empty. If so, continue.
            if not state_lists[MASKED_BLOCKED_GRADS]:
                continue  # expect: RC102

            step = state_lists[STEP].add_(1)
            self._per_group_step(state_lists, step, group)

        return loss
