"""diffusers' checkpointing guard after accelerate#1171: `save_state` runs under `is_main_process or
distributed_type == DEEPSPEED`. Under DeepSpeed every process enters and saves its shards; under
plain DDP the main process alone writes files, and save_state issues no collective there. The
script never names FSDP (the other backend under which save_state gathers), so no process is
left waiting: nothing to report. The flag form (`is_deepspeed = ...` tested later) is the same."""
import os
import shutil

import torch
from accelerate import Accelerator
from accelerate.utils import DistributedType
from torch.utils.data import DataLoader, TensorDataset


def train(output_dir: str, checkpointing_steps: int, checkpoints_total_limit: int) -> None:
    accelerator = Accelerator(gradient_accumulation_steps=1)
    unet = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.SiLU(), torch.nn.Linear(64, 32))
    optimizer = torch.optim.AdamW(unet.parameters(), lr=1e-4)
    loader = DataLoader(TensorDataset(torch.randn(256, 32)), batch_size=8)
    unet, optimizer, loader = accelerator.prepare(unet, optimizer, loader)
    is_deepspeed = accelerator.state.deepspeed_plugin is not None

    global_step = 0
    for (latents,) in loader:
        loss = torch.nn.functional.mse_loss(unet(latents), latents)
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        global_step += 1
        if accelerator.is_main_process or accelerator.distributed_type == DistributedType.DEEPSPEED:
            if global_step % checkpointing_steps == 0:
                checkpoints = sorted(d for d in os.listdir(output_dir) if d.startswith("checkpoint"))
                for old in checkpoints[: max(0, len(checkpoints) - checkpoints_total_limit + 1)]:
                    shutil.rmtree(os.path.join(output_dir, old))
                accelerator.save_state(os.path.join(output_dir, f"checkpoint-{global_step}"))
        if is_deepspeed or accelerator.is_main_process:
            if global_step % (10 * checkpointing_steps) == 0:
                accelerator.save_state(os.path.join(output_dir, f"keep-{global_step}"))
