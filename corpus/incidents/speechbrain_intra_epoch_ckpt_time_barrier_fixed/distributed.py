"""Distributed helpers of a SpeechBrain-style toolkit."""
import os

import torch.distributed as dist


def if_main_process() -> bool:
    return int(os.environ.get("RANK", "0")) == 0


def ddp_barrier() -> None:
    if dist.is_initialized():
        dist.barrier()


def run_on_main(func, args=None, kwargs=None):
    """Run `func` on the main process, then make every process wait for it."""
    args = args or []
    kwargs = kwargs or {}
    if if_main_process():
        func(*args, **kwargs)
    ddp_barrier()
