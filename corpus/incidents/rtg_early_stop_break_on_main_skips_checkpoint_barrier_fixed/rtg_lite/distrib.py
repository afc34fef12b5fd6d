"""Distributed helper of RTG (rtg/distrib/__init__.py): a lazily created singleton that reads the
torch.distributed.launch environment. RTG does not wrap the model in DistributedDataParallel;
gradients are averaged explicitly with one all-reduce per parameter before every optimizer step."""
import os
import socket
from dataclasses import dataclass
from typing import ClassVar

import torch
import torch.distributed as dist
from torch import nn
from torch.cuda.amp import GradScaler
from torch.optim.optimizer import Optimizer

from rtg_lite import log

get_env = os.environ.get


@dataclass()
class DistribTorch:
    host_name: str = socket.gethostname()
    pid: int = os.getpid()
    global_rank: int = int(get_env("RANK", "-1"))
    local_rank: int = int(get_env("LOCAL_RANK", "-1"))
    world_size: int = int(get_env("WORLD_SIZE", "-1"))
    master_addr: str = get_env("MASTER_ADDR", "")
    master_port: int = int(get_env("MASTER_PORT", "-1"))
    gpu_count: int = torch.cuda.device_count()
    fp16: bool = False

    _scaler = None
    _is_backend_ready = False
    _instance: ClassVar["DistribTorch"] = None
    _model: nn.Module = None

    def setup(self):
        if self.world_size > 1:
            assert self.global_rank >= 0 and self.local_rank >= 0
            backend = "nccl" if self.gpu_count > 0 else "gloo"
            log.info(f"Initializing PyTorch distributed with '{backend}' backend:\n {self}")
            torch.distributed.init_process_group(init_method="env://", backend=backend)
            self._is_backend_ready = True
        return self

    def enable_fp16(self):
        if not self.fp16:
            self.fp16 = True
            self._scaler = GradScaler(enabled=True)

    def close(self):
        if self._is_backend_ready:
            torch.distributed.destroy_process_group()
            self._is_backend_ready = False

    @classmethod
    def instance(cls) -> "DistribTorch":
        if not cls._instance:
            cls._instance = cls()
        return cls._instance

    def maybe_distributed(self, module: nn.Module):
        if self.world_size > 1:
            if not self._is_backend_ready:
                self.setup()
            self._model = module
        return module  # not wrapped: gradients are averaged in step()

    @property
    def is_distributed(self) -> bool:
        return self.world_size > 1

    @property
    def is_global_main(self) -> bool:
        return self.global_rank <= 0

    @property
    def is_local_main(self) -> bool:
        return self.local_rank <= 0

    def barrier(self):
        if self.is_distributed:
            torch.distributed.barrier()

    def backward(self, loss):
        if self.fp16:
            loss = self._scaler.scale(loss)
        loss.backward()

    def average_gradients(self, model: nn.Module):
        size = float(self.world_size)
        for param in model.parameters():
            dist.all_reduce(param.grad.data, op=dist.ReduceOp.SUM)
            param.grad.data /= size

    def step(self, optimizer: Optimizer):
        if self.is_distributed:
            self.average_gradients(self._model)
        if self.fp16:
            self._scaler.step(optimizer)
            self._scaler.update()
        else:
            optimizer.step()
        optimizer.zero_grad()


dtorch = DistribTorch.instance()
