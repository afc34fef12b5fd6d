"""Look-alike of safe_checkpoint_load_that_fails_on_every_rank_together: after the collective
load the `try` also reads this rank's own RNG file and all-reduces the step count. A rank whose
file is missing swallows the error and skips the all-reduce the other ranks wait in.
"""
import logging

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp

logger = logging.getLogger(__name__)


def resume(model, optimizer, checkpoint_dir):
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict()}
    step = torch.zeros(1)
    try:
        dcp.load(state, checkpoint_id=checkpoint_dir)
        rng = torch.load(f"{checkpoint_dir}/rng_rank{dist.get_rank()}.pt")
        torch.set_rng_state(rng)
        step += 1
        dist.all_reduce(step)
    except Exception as exc:  # expect: RC105
        logger.warning("could not load %s (%s): starting from the base weights", checkpoint_dir, exc)
    return state, int(step.item())
