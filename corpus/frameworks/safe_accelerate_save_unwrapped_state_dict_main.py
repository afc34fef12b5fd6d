"""Unknown stays unknown: under DDP the unwrapped model's state_dict() and accelerator.save are
local, so saving them on the main process only is fine."""
import torch
from accelerate import Accelerator


def main(model: torch.nn.Module, optimizer, dataloader, path: str) -> None:
    accelerator = Accelerator()
    model, optimizer, dataloader = accelerator.prepare(model, optimizer, dataloader)
    for inputs, targets in dataloader:
        loss = torch.nn.functional.mse_loss(model(inputs), targets)
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        unwrapped = accelerator.unwrap_model(model)
        accelerator.save(unwrapped.state_dict(), path)
