"""The same retry, with a rank-local file read in the `try` and its error caught by the handler:
a rank whose extra-state file is missing (a node-local disk) retries the distributed load alone,
while the others, whose first load succeeded, have gone on."""
import os

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dist_cp
from torch.distributed.checkpoint import CheckpointException
from torch.distributed.checkpoint.default_planner import DefaultLoadPlanner


def load_sharded(state_dict, storage_reader, ckpt_dir):
    try:
        extra = torch.load(os.path.join(ckpt_dir, f"extra_rank{dist.get_rank()}.pt"))
        state_dict["extra"] = extra
        dist_cp.load(state_dict=state_dict, storage_reader=storage_reader)
    except (CheckpointException, FileNotFoundError):
        dist_cp.load(  # expect: RC105
            state_dict=state_dict,
            storage_reader=storage_reader,
            planner=DefaultLoadPlanner(allow_partial_load=True),
        )
