"""DeepSpeed strategy: process-group setup, engine preparation, and the dict-aware all_reduce the
trainers use for their status/log dictionaries."""
import os
from datetime import timedelta

import deepspeed
import torch
import torch.distributed as dist


class DeepspeedStrategy:
    def __init__(self, args, zero_stage=2, bf16=True, max_norm=1.0):
        self.args = args
        self.stage = zero_stage
        self.bf16 = bf16
        self.max_norm = max_norm
        self.world_size = 1

    def setup_distributed(self, timeout=timedelta(minutes=30)):
        local_rank = int(os.environ.get("LOCAL_RANK", 0))
        torch.cuda.set_device(local_rank)
        deepspeed.init_distributed(timeout=timeout)
        self.world_size = dist.get_world_size()

    def ds_config(self, micro_batch_size):
        return {
            "train_micro_batch_size_per_gpu": micro_batch_size,
            "gradient_clipping": self.max_norm,
            "bf16": {"enabled": self.bf16},
            "zero_optimization": {"stage": self.stage, "overlap_comm": True},
        }

    def prepare(self, model, optimizer, scheduler, micro_batch_size):
        engine, optimizer, _, scheduler = deepspeed.initialize(
            model=model, optimizer=optimizer, lr_scheduler=scheduler,
            config=self.ds_config(micro_batch_size), dist_init_required=True,
        )
        return engine, optimizer, scheduler

    def backward(self, loss, engine):
        engine.backward(loss)

    def optimizer_step(self, engine):
        engine.step()

    def all_reduce(self, data, op="mean"):
        assert op in ("mean", "max", "sum")
        if isinstance(data, dict):
            return {k: self.all_reduce(v, op) for k, v in data.items()}
        is_tensor = isinstance(data, torch.Tensor)
        tensor = data if is_tensor else torch.tensor([data], dtype=torch.float32)
        on_cpu = tensor.device.type == "cpu"
        if on_cpu:
            tensor = tensor.to(torch.cuda.current_device())
        if op == "mean":
            tensor = tensor / self.world_size
        dist.all_reduce(tensor, op=dist.ReduceOp.MAX if op == "max" else dist.ReduceOp.SUM)
        if on_cpu:
            tensor = tensor.cpu()
        return tensor if is_tensor else tensor.item()

    def is_rank_0(self):
        return dist.get_rank() == 0

    def print(self, *msg):
        if self.is_rank_0():
            print(*msg)
