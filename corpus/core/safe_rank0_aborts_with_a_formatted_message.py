"""Megatron-DeepSpeed's fused-kernel check: rank 0 aborts the job when a requested optimisation
cannot be used, with `sys.exit(f"ERROR: ...")`. A message as the exit status exits with status 1:
the launcher sees a failed rank and tears the job down, so the barrier the others wait in does not
hang (the job fails loudly, which is what the flag asks for). `sys.exit(0)` there would hang them
(corpus/core/rc102_sys_exit_under_rank_guard.py)."""
import sys

import torch.distributed as dist


def check_kernels(abort, fused_ok, error):
    if dist.get_rank() == 0 and not fused_ok and abort:
        sys.exit(f"\n\nERROR: {error} and --abort-on-unmet-fused-kernel-constraints was passed. Aborting.\n\n")
    dist.barrier()
