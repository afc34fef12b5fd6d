"""A try whose body is the collective and nothing before it: Megatron's orderly shutdown wraps its
last `torch.distributed.barrier()` in `try/except Exception: pass` before destroying the group;
Lightning's DDP strategy falls back to an all_reduce when `barrier(device_ids=...)` raises. What the body raises can only come from the barrier itself (the
group is broken, the wait timed out), which fails it on the ranks waiting too; no rank skips a
collective the others are in. The look-alikes (work before the collective inside the try) are in
rc105_try_runs_work_before_its_barrier.py."""
import torch.distributed as dist


def orderly_shutdown():
    if dist.is_available() and dist.is_initialized():
        try:
            dist.barrier()
        except Exception:
            pass
        dist.destroy_process_group()


def barrier_on(device):
    try:
        dist.barrier(device_ids=[device])
    except RuntimeError:
        return False
    return True


def wait_all(timeout):
    try:
        work = dist.barrier(async_op=True)
    except RuntimeError:
        return False
    return work.wait(timeout)
