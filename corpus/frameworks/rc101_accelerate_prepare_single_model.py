"""PENDING (returns that mirror the arguments): `model = accelerator.prepare(model)` returns the
prepared (DDP) model alone; the catalog's `prepare` returns a tuple (model first), so a single
assignment loses the type and the DDP forward on the main process is missed."""
import torch
from accelerate import Accelerator


def main(dataloader) -> None:
    accelerator = Accelerator()
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.BatchNorm1d(8))
    model = accelerator.prepare(model)
    dataloader = accelerator.prepare(dataloader)
    for batch in dataloader:
        accelerator.backward(model(batch).sum())
    if accelerator.is_main_process:
        print(model(torch.randn(4, 8, device=accelerator.device)))  # expect: RC101
