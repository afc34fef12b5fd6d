"""Trimmed fairseq/distributed/fully_sharded_data_parallel.py: inside `fsdp_enable_wrap`, model code
calls `fsdp_wrap(module)` to make a submodule its own fairscale FSDP unit, whose forward all-gathers
the unit's parameters and whose backward reduce-scatters their gradients."""
import contextlib

import torch.distributed as dist
from fairscale.nn.data_parallel import FullyShardedDataParallel as FSDP
from fairscale.nn.wrap import enable_wrap, wrap


@contextlib.contextmanager
def fsdp_enable_wrap(cfg):
    fsdp_config = {
        "process_group": dist.group.WORLD,
        "reshard_after_forward": not cfg.no_reshard_after_forward,
        "mixed_precision": cfg.fp16,
        "flatten_parameters": True,
        "cpu_offload": cfg.cpu_offload,
        "compute_dtype": None,
        "move_grads_to_cpu": cfg.cpu_offload,
    }
    with enable_wrap(wrapper_cls=FSDP, **fsdp_config):
        yield


def fsdp_wrap(module, min_num_params=None, **kwargs):
    if min_num_params is not None:
        num_params = sum(p.numel() for p in module.parameters())
        if num_params < min_num_params:
            return module
    return wrap(module, **kwargs)
