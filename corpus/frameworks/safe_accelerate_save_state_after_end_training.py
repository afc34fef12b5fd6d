"""An accelerate training script (sd-scripts' shape): step saves on every process, then
`end_training()`, then the last state saved on the main process only. end_training destroys the
default process group (accelerate >= 0.34), so a save_state that needs a collective after it (its
DeepSpeed barrier) raises on the torn-down group instead of waiting: loud, not a hang."""
import argparse

import torch
from accelerate import Accelerator


def save_state_on_train_end(args, accelerator):
    accelerator.save_state(f"{args.output_dir}/last-state")


def train(args):
    accelerator = Accelerator()
    model = torch.nn.Linear(16, 1)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    loader = torch.utils.data.DataLoader(torch.randn(512, 16), batch_size=8)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for step, batch in enumerate(loader):
        loss = model(batch).pow(2).mean()
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        if args.save_every and (step + 1) % args.save_every == 0:
            accelerator.save_state(f"{args.output_dir}/step-{step + 1}")
    is_main_process = accelerator.is_main_process
    accelerator.end_training()
    if is_main_process and args.save_state_on_train_end:
        save_state_on_train_end(args, accelerator)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--output_dir", default="out")
    parser.add_argument("--save_every", type=int, default=0)
    parser.add_argument("--save_state_on_train_end", action="store_true")
    train(parser.parse_args())
