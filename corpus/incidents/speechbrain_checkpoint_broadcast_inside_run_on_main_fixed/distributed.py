"""Distributed helpers of a SpeechBrain-style toolkit, with the main-process-only section tracked
(speechbrain#2404): collectives called inside such a section are skipped, since the other
processes are not there to meet them."""
import os
from functools import wraps

import torch.distributed as dist

MAIN_PROC_ONLY = 0


def if_main_process() -> bool:
    return int(os.environ.get("RANK", "0")) == 0


def main_process_only(function):
    @wraps(function)
    def main_proc_wrapped_func(*args, **kwargs):
        global MAIN_PROC_ONLY
        MAIN_PROC_ONLY += 1
        try:
            if if_main_process():
                return function(*args, **kwargs)
            return None
        finally:
            MAIN_PROC_ONLY -= 1

    return main_proc_wrapped_func


def ddp_barrier() -> None:
    if MAIN_PROC_ONLY >= 1 or not dist.is_initialized():
        return
    dist.barrier()


def ddp_broadcast(communication_object, src: int = 0):
    if MAIN_PROC_ONLY >= 1 or not dist.is_initialized():
        return communication_object
    communication_list = [communication_object]
    dist.broadcast_object_list(communication_list, src=src)
    return communication_list[0]


def run_on_main(func, args=None, kwargs=None):
    """Run `func` on the main process only, then make every process wait for it."""
    args = args or []
    kwargs = kwargs or {}
    main_process_only(func)(*args, **kwargs)
    ddp_barrier()
