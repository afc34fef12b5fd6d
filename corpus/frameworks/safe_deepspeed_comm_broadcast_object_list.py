"""The fix: rank 0 fills the list, every rank takes part in broadcast_object_list."""
import uuid

import deepspeed
import deepspeed.comm as dist


def shared_run_id() -> str:
    deepspeed.init_distributed()
    holder = [None]
    if dist.get_rank() == 0:
        holder[0] = uuid.uuid4().hex[:8]
    dist.broadcast_object_list(holder, src=0)
    return holder[0]
