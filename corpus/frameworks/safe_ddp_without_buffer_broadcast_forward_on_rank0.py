"""A DDP model built with `broadcast_buffers=False` runs its forward on rank 0 alone to render a
sample: with no buffers to broadcast, the forward issues no collective (only a backward would)."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def render_sample(net, prompt, device):
    model = DDP(net.to(device), device_ids=[device], broadcast_buffers=False)
    if dist.get_rank() == 0:
        with torch.no_grad():
            return model(prompt)
    return None
