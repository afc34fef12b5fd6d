"""diffusers' VQGAN and AutoencoderKL scripts save state on the main process only, after one
`accelerator.prepare(model, discriminator, ...)`. accelerate refuses DeepSpeed for a prepare call
handed two models, and the script never names FSDP: in every configuration it can run,
save_state is local (model.state_dict(), optimizer and RNG files) and waits for nobody."""
import os

import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


def train(output_dir: str, checkpointing_steps: int) -> None:
    accelerator = Accelerator()
    model = torch.nn.Conv2d(3, 3, 3, padding=1)
    discriminator = torch.nn.Conv2d(3, 1, 3, padding=1)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    discr_optimizer = torch.optim.AdamW(discriminator.parameters(), lr=1e-4)
    loader = DataLoader(TensorDataset(torch.randn(64, 3, 16, 16)), batch_size=8)
    model, discriminator, optimizer, discr_optimizer, loader = accelerator.prepare(
        model, discriminator, optimizer, discr_optimizer, loader
    )
    global_step = 0
    for (images,) in loader:
        loss = torch.nn.functional.mse_loss(model(images), images) - discriminator(model(images)).mean()
        accelerator.backward(loss)
        optimizer.step()
        discr_optimizer.step()
        global_step += 1
        if accelerator.is_main_process and global_step % checkpointing_steps == 0:
            accelerator.save_state(os.path.join(output_dir, f"checkpoint-{global_step}"))
