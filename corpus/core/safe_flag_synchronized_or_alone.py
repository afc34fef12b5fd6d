"""OLMo's cancel check: rank 0 decides (time limit, W&B tag), and `synchronize_value` broadcasts its
decision. Where the job is not distributed the helper returns the value as it is: that arm meets no
other rank's value, so what the helper returns is alike on every rank, and so is the branch on it."""
import time

import torch
import torch.distributed as dist


def synchronize_value(value, device):
    if dist.is_available() and dist.is_initialized():
        value_tensor = torch.tensor(value, device=device)
        dist.broadcast(value_tensor, 0)
        return value_tensor.item()
    else:
        return value


def check_if_cancelled(start_time, time_limit, device):
    should_cancel = False
    if dist.get_rank() == 0 and time.time() - start_time >= time_limit:
        should_cancel = True
    return synchronize_value(should_cancel, device)


def train_step_end(start_time, time_limit, device, save_checkpoint):
    if check_if_cancelled(start_time, time_limit, device):
        save_checkpoint()
        dist.barrier()
