"""The look-alike of safe_best_effort_barrier_on_the_shutdown_path.py: before the guarded barrier
the block loads this rank's state, which can fail on one rank; the outer `except` swallows that,
and the rank skips the barrier while the others wait in it."""
import torch
import torch.distributed as dist


def restore(path: str):
    state = None
    try:
        if dist.is_initialized():
            state = torch.load(f"{path}/rank{dist.get_rank()}.pt")
            try:
                dist.barrier()
            except Exception:
                pass
    except Exception:  # expect: RC105
        state = None
    dist.barrier()
    return state
