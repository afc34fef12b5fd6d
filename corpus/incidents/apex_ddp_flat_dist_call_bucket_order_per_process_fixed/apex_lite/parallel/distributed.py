"""`apex.parallel.DistributedDataParallel` after apex#18 (merged as 68c96f4): `flat_dist_call`
collects the tensors into an `OrderedDict` of buckets keyed by tensor type, in the order the tensors
are given -- the module's parameter order, identical on every process -- so every process runs
the per-type collectives in the same order on buffers of the same dtype and length.
"""
from collections import OrderedDict

import torch
import torch.distributed as dist
from torch._utils import _flatten_dense_tensors, _unflatten_dense_tensors
from torch.autograd import Variable
from torch.nn.modules import Module


def flat_dist_call(tensors, call, extra_args=()):
    """Coalesce `tensors` per type and run the collective `call` (dist.broadcast / dist.all_reduce)
    once per type on the flat buffer, then copy the result back."""
    buckets = OrderedDict()
    for tensor in tensors:
        tp = tensor.type()
        if tp not in buckets:
            buckets[tp] = []
        buckets[tp].append(tensor)

    if flat_dist_call.warn_on_half and "torch.cuda.HalfTensor" in buckets:
        if dist.get_backend() == "gloo":
            print("WARNING: gloo dist backend for half parameters may be extremely slow."
                  " It is recommended to use the NCCL backend in this case.")
        flat_dist_call.warn_on_half = False

    for tp in buckets:
        bucket = buckets[tp]
        coalesced = _flatten_dense_tensors(bucket)
        call(coalesced, *extra_args)
        if call is dist.all_reduce:
            coalesced /= dist.get_world_size()
        for buf, synced in zip(bucket, _unflatten_dense_tensors(coalesced, bucket)):
            buf.copy_(synced)


flat_dist_call.warn_on_half = True


class DistributedDataParallel(Module):
    """Module wrapper for multiprocess data parallel training, one process per GPU (launched with
    `python -m torch.distributed.launch --nproc_per_node=N main_amp.py ...`). Parameters are
    broadcast from rank 0 at construction; gradients are all-reduced and averaged over processes
    at the end of `backward()`.

    Args:
        module: network to run in distributed mode.
        message_size: minimum number of elements in a communication bucket (kept for the API; the
            overlapping bucket path is not reproduced here).
        shared_param: set if the model shares parameters between layers.
    """

    def __init__(self, module, message_size=10000000, shared_param=False):
        super().__init__()
        self.shared_param = shared_param
        self.message_size = message_size
        self.module = module
        self.param_list = list(self.module.parameters())

        if dist.get_backend() == "nccl":
            for param in self.param_list:
                assert param.is_cuda, "NCCL backend only supports model parameters to be on GPU."

        self.needs_reduction = False
        self.create_hooks()

        flat_dist_call([param.data for param in self.module.parameters()], dist.broadcast, (0,))

    def create_hooks(self):
        # all-reduce every gradient once the whole backward pass has run
        def allreduce_params():
            if not self.needs_reduction:
                return
            self.needs_reduction = False
            grads = [param.grad.data for param in self.module.parameters() if param.grad is not None]
            flat_dist_call(grads, dist.all_reduce)

        for param in self.param_list:
            def allreduce_hook(*unused):
                Variable._execution_engine.queue_callback(allreduce_params)

            if param.requires_grad:
                param.register_hook(allreduce_hook)

    def forward(self, *inputs, **kwargs):
        self.needs_reduction = True
        return self.module(*inputs, **kwargs)
