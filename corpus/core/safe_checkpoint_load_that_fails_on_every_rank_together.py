"""torchtune's resume path: a failed distributed-checkpoint load is logged and training starts
from the base weights. torch.distributed.checkpoint raises a failure of any rank on every rank
(CheckpointException), so every rank takes the handler together and none waits for another.
"""
import logging

import torch.distributed as dist
import torch.distributed.checkpoint as dcp

logger = logging.getLogger(__name__)


def load_distributed_checkpoint(model, optimizer, checkpoint_dir):
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict()}
    dcp.load(state, checkpoint_id=checkpoint_dir)
    return state


def resume(model, optimizer, checkpoint_dir):
    state = None
    try:
        state = load_distributed_checkpoint(model, optimizer, checkpoint_dir)
    except Exception as exc:
        logger.warning("could not load %s (%s): starting from the base weights", checkpoint_dir, exc)
    dist.barrier()
    return state
