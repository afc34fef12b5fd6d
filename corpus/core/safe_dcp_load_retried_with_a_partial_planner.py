"""Composer's resume: a distributed-checkpoint load that fails on a missing optimizer key is
retried with a planner that allows a partial load. torch.distributed.checkpoint gathers every
rank's error and raises CheckpointException on all of them, so every rank enters the handler and
issues the second load together."""
import re

import torch.distributed.checkpoint as dist_cp
from torch.distributed.checkpoint import CheckpointException
from torch.distributed.checkpoint.default_planner import DefaultLoadPlanner


def load_sharded(state_dict, storage_reader, load_planner=None):
    try:
        dist_cp.load(state_dict=state_dict, storage_reader=storage_reader, planner=load_planner)
    except CheckpointException as e:
        if re.search(r"Missing key.+Adam.+decoupled_weight_decay", str(e)) is None:
            raise
        dist_cp.load(
            state_dict=state_dict,
            storage_reader=storage_reader,
            planner=DefaultLoadPlanner(allow_partial_load=True),
        )
