"""`with contextlib.suppress(OSError):` is a `try` whose handler does nothing: the source rank's
shared-memory probe fails on its own machine (a name too long for the OS), the OSError leaves the
block, and that rank skips the broadcast the others wait in (sglang#34800's shape). Written as
`from contextlib import suppress` and with a second manager in the same `with`, it is the same."""
import contextlib
from contextlib import suppress
from multiprocessing import shared_memory

import torch.distributed as dist


def probe_same_node(name: str) -> bool:
    rank = dist.get_rank()
    found = [None]
    with contextlib.suppress(OSError):  # expect: RC105
        if rank == 0:
            shm = shared_memory.SharedMemory(create=True, size=16, name=name)
            found = [shm.name]
        dist.broadcast_object_list(found, src=0)
    dist.barrier()
    return found[0] is not None


def publish_path(path: str, log):
    with open(log, "a") as out, suppress(FileNotFoundError, PermissionError):  # expect: RC105
        out.write(path)
        with open(path) as f:
            names = [f.read()]
        dist.broadcast_object_list(names, src=0)
    dist.barrier()
