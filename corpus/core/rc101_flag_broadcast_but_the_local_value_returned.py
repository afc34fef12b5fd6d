"""A look-alike of OLMo's helper with the bug the broadcast was meant to prevent: the distributed
arm broadcasts a copy and returns the value it was given, this rank's own decision, so the branch
on it still differs between ranks."""
import time

import torch
import torch.distributed as dist


def synchronize_value(value, device):
    if dist.is_available() and dist.is_initialized():
        value_tensor = torch.tensor(value, device=device)
        dist.broadcast(value_tensor, 0)
        return value
    else:
        return value


def check_if_cancelled(start_time, time_limit, device):
    should_cancel = False
    if dist.get_rank() == 0 and time.time() - start_time >= time_limit:
        should_cancel = True
    return synchronize_value(should_cancel, device)


def train_step_end(start_time, time_limit, device, save_checkpoint):
    if check_if_cancelled(start_time, time_limit, device):
        dist.barrier()  # expect: RC101
