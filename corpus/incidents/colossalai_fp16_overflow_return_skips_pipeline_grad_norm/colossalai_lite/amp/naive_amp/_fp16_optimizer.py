"""Trimmed colossalai/amp/naive_amp/_fp16_optimizer.py as it was before hpcaitech/ColossalAI#1175."""
import torch
import torch.distributed as dist
from torch.optim import Optimizer

from colossalai_lite.context import ParallelMode
from colossalai_lite.core import global_context as gpc
from colossalai_lite.utils.common import clip_grad_norm_fp32

from ._utils import has_inf_or_nan, zero_grad_by_list


class DynamicGradScaler:
    def __init__(self, initial_scale=2 ** 16, growth_interval=1000, backoff_factor=0.5, growth_factor=2.0):
        self.scale = float(initial_scale)
        self._growth_interval = growth_interval
        self._backoff = backoff_factor
        self._growth = growth_factor
        self._good_steps = 0

    def update(self, overflow: bool) -> None:
        if overflow:
            self.scale = max(self.scale * self._backoff, 1.0)
            self._good_steps = 0
        else:
            self._good_steps += 1
            if self._good_steps % self._growth_interval == 0:
                self.scale *= self._growth


class FP16Optimizer(Optimizer):
    def __init__(self, optimizer: Optimizer, grad_scaler: DynamicGradScaler, clip_grad_norm=0.0,
                 dp_process_group=None, mp_process_group=None):
        self._optimizer = optimizer
        self._grad_scaler = grad_scaler
        self._clip_grad_max_norm = clip_grad_norm
        self._found_overflow = torch.cuda.FloatTensor([0.0])

        def _get_process_group(parallel_mode):
            # as in the original: the mode argument is not used, so both lookups return the
            # data-parallel group
            if gpc.is_initialized(ParallelMode.DATA) and gpc.get_world_size(ParallelMode.DATA):
                return gpc.get_group(ParallelMode.DATA)
            return None

        if dp_process_group is None:
            dp_process_group = _get_process_group(ParallelMode.DATA)
        if mp_process_group is None:
            mp_process_group = _get_process_group(ParallelMode.MODEL)
        self._dp_process_group = dp_process_group
        self._mp_process_group = mp_process_group

        # fp16 model params and their fp32 master copies, which the wrapped optimizer updates
        self._fp16_groups, self._fp32_groups = [], []
        for group in self._optimizer.param_groups:
            fp16_params, fp32_params = [], []
            for i, p in enumerate(group["params"]):
                if not p.requires_grad:
                    continue
                master = p.detach().clone().float()
                group["params"][i] = master
                fp16_params.append(p)
                fp32_params.append(master)
            self._fp16_groups.append(fp16_params)
            self._fp32_groups.append(fp32_params)
        self._optimizer.load_state_dict(self._optimizer.state_dict())

    @property
    def loss_scale(self):
        return self._grad_scaler.scale

    @property
    def param_groups(self):
        return self._optimizer.param_groups

    def zero_grad(self, set_to_none=True):
        for group in self._optimizer.param_groups:
            zero_grad_by_list(group["params"], set_to_none=set_to_none)
        for group in self._fp16_groups:
            zero_grad_by_list(group, set_to_none=set_to_none)

    def backward(self, loss):
        (loss * self.loss_scale).backward()

    def _assign_grad_to_fp32_master_param(self):
        for fp16_params, fp32_params in zip(self._fp16_groups, self._fp32_groups):
            for p16, p32 in zip(fp16_params, fp32_params):
                if p16.grad is not None:
                    p32.grad = p16.grad.float()
                    p16.grad = None

    def _unscale_grads(self):
        for fp32_params in self._fp32_groups:
            for p in fp32_params:
                if p.grad is not None:
                    p.grad.data.div_(self.loss_scale)

    def _check_overflow(self) -> bool:
        self._found_overflow.fill_(0.0)
        for group in self._optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None and has_inf_or_nan(p.grad):
                    self._found_overflow.fill_(1.0)
                    break
        # reduced over the data-parallel group ...
        if self._dp_process_group:
            dist.all_reduce(self._found_overflow, op=dist.ReduceOp.MAX, group=self._dp_process_group)
        # ... and over the "model-parallel" group, which is the data-parallel group again, so
        # two pipeline stages of one replica can disagree on the flag
        if self._mp_process_group:
            dist.all_reduce(self._found_overflow, op=dist.ReduceOp.MAX, group=self._mp_process_group)
        return self._found_overflow.item() > 0

    def _update_fp16_param_from_fp32_param(self):
        for fp16_params, fp32_params in zip(self._fp16_groups, self._fp32_groups):
            for p16, p32 in zip(fp16_params, fp32_params):
                p16.data.copy_(p32.data)

    def clip_grad_norm(self, max_norm):
        params = [p for group in self._optimizer.param_groups for p in group["params"]]
        return clip_grad_norm_fp32(params, max_norm)

    def step(self):
        self._assign_grad_to_fp32_master_param()
        self._unscale_grads()

        overflow = self._check_overflow()
        self._grad_scaler.update(overflow)

        if overflow:
            self.zero_grad()
            return False, None  # expect: RC102

        grad_norm = None
        if self._clip_grad_max_norm > 0.0:
            grad_norm = self.clip_grad_norm(self._clip_grad_max_norm)

        self._optimizer.step()
        self._update_fp16_param_from_fp32_param()
        return True, grad_norm
