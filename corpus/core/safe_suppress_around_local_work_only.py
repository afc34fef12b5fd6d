"""Look-alikes of a `contextlib.suppress` block: it holds only this rank's own work (the source
rank's shared-memory probe), and the broadcast comes after it on every rank whatever the probe
did (sglang's fix, PR #34910); or it suppresses nothing; or it follows the last collective."""
import contextlib
from multiprocessing import shared_memory

import torch.distributed as dist


def probe_same_node(name: str) -> bool:
    rank = dist.get_rank()
    found = [None]
    with contextlib.suppress(OSError):
        if rank == 0:
            shm = shared_memory.SharedMemory(create=True, size=16, name=name)
            found = [shm.name]
    dist.broadcast_object_list(found, src=0)
    dist.barrier()
    return found[0] is not None


def suppress_nothing(t):
    with contextlib.suppress():
        dist.all_reduce(t)
    dist.barrier()


def cleanup(path: str):
    dist.barrier()
    with contextlib.suppress(OSError):
        shared_memory.SharedMemory(name=path).unlink()
