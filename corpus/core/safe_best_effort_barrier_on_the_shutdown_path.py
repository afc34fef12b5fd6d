"""A signal handler's orderly shutdown (Megatron's `_graceful_shutdown`): under `if
dist.is_initialized():` a best-effort barrier in a `try` that swallows every error, then
`destroy_process_group()`, all inside an outer `try` that swallows whatever the teardown raises.
A rank that fails there has already passed the barrier, and nothing after it communicates."""
import sys

import torch.distributed as dist


def graceful_shutdown(signum, frame):
    try:
        if dist.is_available() and dist.is_initialized():
            try:
                dist.barrier()
            except Exception:
                pass
            dist.destroy_process_group()
    except Exception:
        pass
    sys.exit(0)
