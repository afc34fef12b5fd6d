"""A "master first" guard written by hand, once per job and once per node: the ranks that are not
the job's (or the node's) first wait in a barrier before the body, the first ones release them with
a barrier after it. Global rank 0 is its node's local rank 0 too, so every rank issues exactly two
barriers, and the body (a download into the node's shared cache) communicates with nobody. The
ranks come from the launcher's environment through a helper returning them as a tuple, and whether
the job is distributed is asked of a helper twice."""
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
    with safe_ddp_context():
        return snapshot_download(model_id)
