"""Look-alike of safe_ddp_without_buffer_broadcast_forward_on_rank0: with the default
`broadcast_buffers=True` the forward broadcasts the buffers from rank 0, and only rank 0 runs it."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def render_sample(net, prompt, device):
    model = DDP(net.to(device), device_ids=[device], broadcast_buffers=True)
    if dist.get_rank() == 0:
        with torch.no_grad():
            return model(prompt)  # expect: RC101
    return None
