"""Look-alikes of diffusers' `is_main_process or DEEPSPEED` checkpoint guard that still hang.

A guard that lets every process in under FSDP (flux2's `is_fsdp`) leaves DeepSpeed, which
`accelerate launch` applies to an unchanged script (accelerate#1171): there save_state gathers the
ZeRO shards, and the main process waits alone. A script that sets up FSDP itself (an FSDP plugin
handed to the Accelerator, accelerate#3250) and lets every process in under DeepSpeed only leaves
FSDP's state-dict gather to the main process."""
import os

import torch
from accelerate import Accelerator, FullyShardedDataParallelPlugin
from accelerate.utils import DistributedType
from torch.utils.data import DataLoader, TensorDataset


def train(output_dir: str, checkpointing_steps: int, use_fsdp: bool) -> None:
    plugin = FullyShardedDataParallelPlugin() if use_fsdp else None
    accelerator = Accelerator(fsdp_plugin=plugin)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.SiLU(), torch.nn.Linear(64, 32))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    loader = DataLoader(TensorDataset(torch.randn(256, 32)), batch_size=8)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    is_fsdp = getattr(accelerator.state, "fsdp_plugin", None) is not None

    global_step = 0
    for (x,) in loader:
        loss = torch.nn.functional.mse_loss(model(x), x)
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        global_step += 1
        if global_step % checkpointing_steps == 0:
            if accelerator.is_main_process or is_fsdp:
                accelerator.save_state(os.path.join(output_dir, f"checkpoint-{global_step}"))  # expect: RC101
            if accelerator.distributed_type == DistributedType.DEEPSPEED or accelerator.is_main_process:
                accelerator.save_state(os.path.join(output_dir, f"latest-{global_step}"))  # expect: RC101

