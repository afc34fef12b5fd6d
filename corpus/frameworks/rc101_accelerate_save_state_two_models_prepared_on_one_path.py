"""diffusers' DreamBooth: the text encoder is prepared beside the UNet only with
--train_text_encoder; without it one model is prepared, DeepSpeed runs, and save_state on the main
process alone waits for the other processes in the ZeRO checkpoint (accelerate#1171)."""
import os

from accelerate import Accelerator


def train(output_dir: str, unet, text_encoder, optimizer, loader, train_text_encoder: bool) -> None:
    accelerator = Accelerator()
    if train_text_encoder:
        unet, text_encoder, optimizer, loader = accelerator.prepare(unet, text_encoder, optimizer, loader)
    else:
        unet, optimizer, loader = accelerator.prepare(unet, optimizer, loader)
    for step, (x,) in enumerate(loader):
        accelerator.backward(unet(x).mean())
        optimizer.step()
        if accelerator.is_main_process:
            accelerator.save_state(os.path.join(output_dir, f"checkpoint-{step}"))  # expect: RC101
