"""Look-alikes of the lone barrier in a try: here the body does work before the collective (a
checkpoint written, a metric computed between two collectives) and the handler passes. The rank
whose work fails skips the collective after it, which the others entered."""
import torch
import torch.distributed as dist


def save_then_wait(state, path):
    try:
        torch.save(state, path)
        dist.barrier()
    except Exception:  # expect: RC105
        pass
    dist.destroy_process_group()


def sync_two(t, batch):
    try:
        dist.all_reduce(t)
        loss = batch.compute_loss()
        dist.all_reduce(loss)
    except Exception:  # expect: RC105
        pass
    return t
