"""A "global rank 0 goes first" guard written as a context manager class: `__enter__` holds the
other ranks in a barrier, `__exit__` has rank 0 release them with its own. Every rank enters it
around a download into the shared cache, which communicates with nobody: one barrier each."""
import torch.distributed as dist
from huggingface_hub import snapshot_download


class FirstRankGoesFirst:
    def __init__(self):
        self._first = True

    def __enter__(self):
        if not dist.is_initialized() or dist.get_world_size() == 1:
            self._first = True
            return True
        self._first = dist.get_rank() == 0
        if not self._first:
            dist.barrier()
        return self._first

    def __exit__(self, exc_type, exc_val, exc_tb):
        if self._first and dist.is_initialized() and dist.get_world_size() > 1:
            dist.barrier()
        return False


def fetch_weights(model_id):
    with FirstRankGoesFirst():
        return snapshot_download(model_id)
