"""`apex.parallel.DistributedDataParallel` as of June 2018 (apex/parallel/distributed.py), before
apex#18: parameters are broadcast from rank 0 when the wrapper is built, and gradients are
all-reduced at the end of backward, in both cases coalesced into one flat buffer per tensor type
by `flat_dist_call`.

With a mixed-precision network (`network_to_half`: convolutions and linear layers in fp16, batch
norm kept in fp32) there are two tensor types, `torch.cuda.HalfTensor` and
`torch.cuda.FloatTensor`, hence two buckets and two collectives per call. The order of the buckets
is the iteration order of the type names: in the 2018 code a plain dict keyed by type name, which
on the Python 3.5 of the thread iterated in string-hash order, and string hashes are salted per
process (PYTHONHASHSEED). This reconstruction keeps that property on Python 3.11, where a dict
keeps insertion order, by iterating the set of type names, which is still in salted-hash order.
"""
import torch
import torch.distributed as dist
from torch._utils import _flatten_dense_tensors, _unflatten_dense_tensors
from torch.autograd import Variable
from torch.nn.modules import Module


def flat_dist_call(tensors, call, extra_args=()):
    """Coalesce `tensors` per type and run the collective `call` (dist.broadcast / dist.all_reduce)
    once per type on the flat buffer, then copy the result back."""
    tensor_types = {tensor.type() for tensor in tensors}

    if flat_dist_call.warn_on_half and "torch.cuda.HalfTensor" in tensor_types:
        if dist.get_backend() == "gloo":
            print("WARNING: gloo dist backend for half parameters may be extremely slow."
                  " It is recommended to use the NCCL backend in this case.")
        flat_dist_call.warn_on_half = False

    for tp in tensor_types:
        bucket = [tensor for tensor in tensors if tensor.type() == tp]
        coalesced = _flatten_dense_tensors(bucket)
        call(coalesced, *extra_args)  # expect: RC104
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
