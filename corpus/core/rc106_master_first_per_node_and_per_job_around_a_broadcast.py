"""The look-alike: the same two-level "master first" guard around a body that broadcasts the
resolved revision. The first ranks broadcast before their release barriers, while the waiting ranks
are still in their first barrier: a broadcast meets a barrier."""
import os
from contextlib import contextmanager

import torch.distributed as dist
from huggingface_hub import snapshot_download


def get_dist_setting():
    rank = int(os.environ.get("RANK", -1))
    local_rank = int(os.environ.get("LOCAL_RANK", -1))
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    return rank, local_rank, world_size


def is_dist():
    rank, local_rank, _ = get_dist_setting()
    return rank >= 0 and local_rank >= 0


def is_master():
    return get_dist_setting()[0] in {-1, 0}


def is_local_master():
    return get_dist_setting()[1] in {-1, 0}


@contextmanager
def safe_ddp_context():
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


def fetch_model(model_id):
    with safe_ddp_context():  # expect: RC106
        path = snapshot_download(model_id)
        revision = [path]
        dist.broadcast_object_list(revision, src=0)
        return revision[0]
