"""The same script with the last-state save on the main process made before `end_training()`:
the process group is still up, so under DeepSpeed the save's barrier waits for the other
processes, which have gone on to end_training and left (the hang of accelerate#1171)."""
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
    if accelerator.is_main_process and args.save_state_on_train_end:
        save_state_on_train_end(args, accelerator)  # expect: RC101
    accelerator.end_training()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--output_dir", default="out")
    parser.add_argument("--save_state_on_train_end", action="store_true")
    train(parser.parse_args())
