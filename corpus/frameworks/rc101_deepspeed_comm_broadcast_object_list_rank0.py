"""A run id is created on rank 0 and broadcast inside the rank-0 branch with deepspeed.comm: the
other ranks never join the broadcast."""
import uuid

import deepspeed
import deepspeed.comm as dist


def shared_run_id() -> str:
    deepspeed.init_distributed()
    holder = [None]
    if dist.get_rank() == 0:
        holder[0] = uuid.uuid4().hex[:8]
        dist.broadcast_object_list(holder, src=0)  # expect: RC101
    return holder[0]
