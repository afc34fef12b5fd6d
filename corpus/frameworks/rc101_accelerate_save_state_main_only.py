"""accelerate checkpointing under `if accelerator.is_main_process:`: save_state must run on every
process (it gathers sharded state under FSDP/DeepSpeed; huggingface/accelerate#1171), so the main
process hangs inside it."""
import json
import os

import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


def train(output_dir: str, checkpointing_steps: int = 500) -> None:
    accelerator = Accelerator(gradient_accumulation_steps=2)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    train_dataloader = DataLoader(TensorDataset(torch.randn(512, 32), torch.randn(512, 1)), batch_size=16, shuffle=True)
    model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)

    completed_steps = 0
    for inputs, targets in train_dataloader:
        with accelerator.accumulate(model):
            loss = torch.nn.functional.mse_loss(model(inputs), targets)
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        if accelerator.sync_gradients:
            completed_steps += 1
            if completed_steps % checkpointing_steps == 0 and accelerator.is_main_process:
                step_dir = os.path.join(output_dir, f"step_{completed_steps}")
                accelerator.save_state(step_dir)  # expect: RC101
                with open(os.path.join(step_dir, "summary.json"), "w") as f:
                    json.dump({"step": completed_steps, "loss": loss.item()}, f)
