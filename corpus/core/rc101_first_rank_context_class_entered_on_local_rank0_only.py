"""The look-alike: the download is skipped where the node's local rank 0 has it already, and the
guard is entered only on local rank 0 (`if local_rank == 0:`). The other ranks never enter its
barriers: global rank 0 waits in its releasing barrier, the other nodes' local rank 0 in their
holding one, for ranks that have gone on."""
import os

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


def fetch_weights(model_id, cache_dir):
    local_rank = int(os.environ["LOCAL_RANK"])
    if local_rank == 0 and not os.path.isdir(cache_dir):
        with FirstRankGoesFirst():  # expect: RC101
            snapshot_download(model_id, local_dir=cache_dir)
    return cache_dir
