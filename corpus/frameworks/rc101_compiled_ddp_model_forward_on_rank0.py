"""`torch.compile` wraps the DDP model and `.eval()` returns it: the compiled model is still the
DDP model, and its forward on rank 0 alone broadcasts buffers the other ranks never receive."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def build(local_model: torch.nn.Module) -> torch.nn.Module:
    return torch.compile(DDP(local_model))


def train(local_model: torch.nn.Module, steps: int) -> None:
    dist.init_process_group("gloo")
    model = build(local_model)
    for step in range(steps):
        model(torch.randn(4, 8)).sum().backward()
        if dist.get_rank() == 0 and step % 50 == 0:
            evaluator = model.eval()
            sample = evaluator(torch.randn(1, 8))  # expect: RC101
            print(step, sample)
            model.train()
