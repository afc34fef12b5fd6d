"""Process-topology helpers and the download/cache guard used around every model load."""
import hashlib
import os
from contextlib import contextmanager
from typing import Optional, Tuple

import torch.distributed as dist
from filelock import FileLock


def get_dist_setting() -> Tuple[int, int, int, int]:
    rank = int(os.environ.get("RANK", -1))
    local_rank = int(os.environ.get("LOCAL_RANK", -1))
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    local_world_size = int(os.environ.get("LOCAL_WORLD_SIZE", 1))
    return rank, local_rank, world_size, local_world_size


def is_dist() -> bool:
    rank, local_rank, _, _ = get_dist_setting()
    return rank >= 0 and local_rank >= 0


def is_master() -> bool:
    return get_dist_setting()[0] in {-1, 0}


def is_local_master() -> bool:
    return get_dist_setting()[1] in {-1, 0}


def get_cache_dir() -> str:
    return os.environ.get("SWIFT_CACHE_DIR", os.path.expanduser("~/.cache/swiftlite"))


_DISABLE_USE_BARRIER = False


@contextmanager
def disable_safe_ddp_context_use_barrier():
    """For code that only one process runs: fall back to a file lock instead of the barriers."""
    global _DISABLE_USE_BARRIER
    _DISABLE_USE_BARRIER = True
    try:
        yield
    finally:
        _DISABLE_USE_BARRIER = False


@contextmanager
def safe_ddp_context(hash_id: Optional[str], use_barrier: bool = True):
    """Let the (local) master download/compile first while the other ranks wait at a barrier.

    Every rank of the job has to enter this context the same number of times: the master
    passes its two barriers after the body, the others before it.
    """
    if _DISABLE_USE_BARRIER:
        use_barrier = False
    if use_barrier and dist.is_initialized():
        if is_dist():
            if not is_master():
                dist.barrier()
            if not is_local_master():
                dist.barrier()
        yield
        if is_dist():
            if is_master():
                dist.barrier()
            if is_local_master():
                dist.barrier()
    elif hash_id is not None:
        lock_dir = os.path.join(get_cache_dir(), "lockers")
        os.makedirs(lock_dir, exist_ok=True)
        lock_name = hashlib.sha256(hash_id.encode("utf-8")).hexdigest() + ".lock"
        with FileLock(os.path.join(lock_dir, lock_name)):
            yield
    else:
        yield
