"""DeepSpeed's training engine of mid-2020 (`deepspeed/pt/deepspeed_light.py`), trimmed to the
non-ZeRO data-parallel path: after `backward`, at each gradient-accumulation boundary, the engine
all-reduces the gradients itself, in flattened buckets (`buffered_allreduce_fallback`).

Thread: https://github.com/deepspeedai/DeepSpeed/pull/291 ("Empty grad fix")
Project: deepspeedai/DeepSpeed
What hung: "This fixes a case where there is an imbalance between empty gradients across ranks.
Example: rank 0 has 2 parameters with gradients and rank 1 has 1 parameter with gradients and 1
parameter where grads are None. This caused the all-reduce to be imbalanced in size since we were
previously ignoring all grads that were None. [...] this imbalance did not cause a crash it would
cause hanging issues in the first place that tried to access the reduced gradient data itself."
The PR's test model adds a second linear layer's output on rank 0 only; in practice any
sub-module that a rank's batches have not reached yet (here: an auxiliary head used only for
batches that carry auxiliary labels) leaves `param.grad is None` on that rank alone.
Fix (the PR, merged): "we pad all None gradients with zero tensors" -- every rank puts one tensor
per parameter into the buckets, so the flattened buffers have the same size everywhere.
Expected rankcheck finding: RC104 on the `dist.all_reduce(tensor_to_allreduce, ...)` of
`allreduce_bucket`, whose tensor is `flatten(bucket)` of the per-rank list of non-None gradients
built in `buffered_allreduce_fallback`.
(Trimmed: ZeRO stages, fp16/amp optimizers, CSR sparse gradients, timers, tensorboard, checkpoint
I/O, the pre-scale all-reduce branch; the config is read from the `--deepspeed_config` json.)
"""
import json
import logging

import torch
import torch.distributed as dist
from torch._utils import _flatten_dense_tensors as flatten
from torch._utils import _unflatten_dense_tensors as unflatten
from torch.nn import Module

logger = logging.getLogger("DeepSpeed")

MEMORY_OPT_ALLREDUCE_SIZE = 500000000


def add_config_arguments(parser):
    group = parser.add_argument_group("DeepSpeed", "DeepSpeed configurations")
    group.add_argument("--deepspeed", default=False, action="store_true")
    group.add_argument("--deepspeed_config", default=None, type=str)
    group.add_argument("--local_rank", type=int, default=-1)
    return parser


def split_half_float_double(tensors):
    dtypes = ["torch.cuda.HalfTensor", "torch.cuda.FloatTensor", "torch.cuda.DoubleTensor"]
    buckets = []
    for dtype in dtypes:
        bucket = [t for t in tensors if t.type() == dtype]
        if bucket:
            buckets.append((dtype, bucket))
    return buckets


class DeepSpeedLight(Module):
    def __init__(self, args, model, optimizer=None, model_parameters=None):
        super().__init__()
        with open(args.deepspeed_config) as f:
            self._config = json.load(f)
        if not dist.is_initialized():
            dist.init_process_group(backend="nccl")
        self.global_rank = dist.get_rank()
        self.dp_world_size = dist.get_world_size()
        self.data_parallel_group = dist.new_group(ranks=list(range(self.dp_world_size)))
        self.micro_steps = 0
        self.global_steps = 0
        self.gradient_average = True
        self.module = model.to(torch.device("cuda", args.local_rank))
        self._broadcast_model()
        params = model_parameters if model_parameters is not None else self.module.parameters()
        self.optimizer = optimizer or torch.optim.Adam(params, **self._config["optimizer"]["params"])

    def gradient_accumulation_steps(self):
        return self._config.get("gradient_accumulation_steps", 1)

    def gradient_predivide_factor(self):
        return self._config.get("gradient_predivide_factor", 1.0)

    def gradient_clipping(self):
        return self._config.get("gradient_clipping", 0.0)

    def _broadcast_model(self):
        for p in self.module.parameters():
            if torch.is_tensor(p):
                dist.broadcast(p, 0, group=self.data_parallel_group)

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)

    def is_gradient_accumulation_boundary(self):
        return (self.micro_steps + 1) % self.gradient_accumulation_steps() == 0

    def allreduce_gradients(self, bucket_size=MEMORY_OPT_ALLREDUCE_SIZE):
        if self.is_gradient_accumulation_boundary():
            self.buffered_allreduce_fallback(elements_per_buffer=bucket_size)

    def backward(self, loss, allreduce_gradients=True):
        if self.gradient_accumulation_steps() > 1:
            loss = loss.float() / self.gradient_accumulation_steps()
        loss.backward()
        if allreduce_gradients:
            self.allreduce_gradients()
        return loss

    def step(self):
        if self.is_gradient_accumulation_boundary():
            if self.gradient_clipping() > 0.0:
                torch.nn.utils.clip_grad_norm_(self.module.parameters(), self.gradient_clipping())
            self.optimizer.step()
            self.optimizer.zero_grad()
            self.global_steps += 1
        self.micro_steps += 1

    def allreduce_bucket(self, bucket):
        tensor = flatten(bucket)
        tensor_to_allreduce = tensor
        if self.gradient_predivide_factor() != 1.0:
            tensor_to_allreduce.mul_(1.0 / self.gradient_predivide_factor())
        dist.all_reduce(tensor_to_allreduce, group=self.data_parallel_group)  # expect: RC104
        if self.gradient_average:
            if self.gradient_predivide_factor() != self.dp_world_size:
                tensor_to_allreduce.mul_(self.gradient_predivide_factor() / self.dp_world_size)
        return tensor

    def allreduce_and_copy(self, small_bucket):
        allreduced = self.allreduce_bucket(small_bucket)
        for buf, synced in zip(small_bucket, unflatten(allreduced, small_bucket)):
            buf.copy_(synced)

    def allreduce_no_retain(self, bucket, numel_per_bucket=500000000):
        small_bucket = []
        numel = 0
        for tensor in bucket:
            small_bucket.append(tensor)
            numel = numel + tensor.numel()
            if numel > numel_per_bucket:
                self.allreduce_and_copy(small_bucket)
                small_bucket = []
                numel = 0
        if len(small_bucket) > 0:
            self.allreduce_and_copy(small_bucket)

    def buffered_allreduce_fallback(self, grads=None, elements_per_buffer=500000000):
        grads = []
        for param_name, param in self.module.named_parameters():
            if param.grad is not None:
                grads.append(param.grad.data)

        split_buckets = split_half_float_double(grads)
        for i, bucket_tuple in enumerate(split_buckets):
            bucket_type, bucket = bucket_tuple
            self.allreduce_no_retain(bucket, numel_per_bucket=elements_per_buffer)


def initialize(args, model, optimizer=None, model_parameters=None):
    engine = DeepSpeedLight(args=args, model=model, optimizer=optimizer, model_parameters=model_parameters)
    return engine, engine.optimizer
