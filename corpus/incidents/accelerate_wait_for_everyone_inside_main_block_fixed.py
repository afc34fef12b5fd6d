"""Safe twin of accelerate_wait_for_everyone_inside_main_block.py: every process reaches
`wait_for_everyone()` at a checkpoint step; only the main process writes the file.

Thread: https://github.com/bytedance/UNO/issues/71
"""
import argparse
import logging
import os

import torch
from accelerate import Accelerator
from safetensors.torch import save_file

logger = logging.getLogger(__name__)


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--project_dir", default="log/uno")
    parser.add_argument("--checkpointing_steps", type=int, default=1000)
    parser.add_argument("--max_train_steps", type=int, default=20000)
    parser.add_argument("--learning_rate", type=float, default=8e-5)
    return parser.parse_args()


def main(dit, train_dataloader, compute_loss):
    args = get_args()
    accelerator = Accelerator(gradient_accumulation_steps=1)
    optimizer = torch.optim.AdamW([p for p in dit.parameters() if p.requires_grad], lr=args.learning_rate)
    dit, optimizer, train_dataloader = accelerator.prepare(dit, optimizer, train_dataloader)

    global_step = 0
    while global_step < args.max_train_steps:
        for batch in train_dataloader:
            with accelerator.accumulate(dit):
                loss = compute_loss(dit, batch)
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
            if accelerator.sync_gradients:
                global_step += 1

            if accelerator.sync_gradients and global_step % args.checkpointing_steps == 0:
                accelerator.wait_for_everyone()
                if accelerator.is_main_process:
                    logger.info(f"saving checkpoint in {global_step=}")
                    save_path = os.path.join(args.project_dir, f"checkpoint-{global_step}")
                    os.makedirs(save_path, exist_ok=True)
                    unwrapped_model = accelerator.unwrap_model(dit)
                    unwrapped_model_state = unwrapped_model.state_dict()
                    requires_grad_key = [k for k, v in unwrapped_model.named_parameters() if v.requires_grad]
                    unwrapped_model_state = {k: unwrapped_model_state[k] for k in requires_grad_key}
                    save_file(unwrapped_model_state, os.path.join(save_path, "dit_lora.safetensors"))
            if global_step >= args.max_train_steps:
                break
