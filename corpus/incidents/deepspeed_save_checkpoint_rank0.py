"""DeepSpeed training script that writes its periodic checkpoint from rank 0 only, following the
"save only on the main process" advice of the DDP tutorial.

Thread: https://github.com/deepspeedai/DeepSpeed/issues/2993
Project: deepspeedai/DeepSpeed
What hung: `DeepSpeedEngine.save_checkpoint` is collective (each rank writes its ZeRO partition and
the engine synchronizes the ranks). Called under `if rank == 0`, rank 0 waited inside it while the
other ranks carried on training ("if i judge rank==0 before save checkpoint, the process will hang
on"). The same requirement is what stas00 hit in DeepSpeed#797 and documented in DeepSpeed#801:
"all processes must call this method".
Fix: call `model_engine.save_checkpoint(...)` on every rank.
Expected rankcheck finding: RC101 on the guarded `save_checkpoint` call.
"""
import argparse
import os

import deepspeed
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.utils.data import DataLoader


def get_args():
    parser = argparse.ArgumentParser(description="deepspeed finetuning")
    parser.add_argument("--local_rank", type=int, default=-1)
    parser.add_argument("--save_dir", type=str, default="checkpoints")
    parser.add_argument("--save_interval", type=int, default=1000)
    parser.add_argument("--epochs", type=int, default=3)
    parser = deepspeed.add_config_arguments(parser)
    return parser.parse_args()


def train(model, train_dataset):
    args = get_args()
    deepspeed.init_distributed()
    model_engine, optimizer, train_loader, _ = deepspeed.initialize(
        args=args, model=model, model_parameters=[p for p in model.parameters() if p.requires_grad], training_data=train_dataset
    )
    rank = dist.get_rank()
    step = 0
    for epoch in range(args.epochs):
        for inputs, labels in train_loader:
            inputs = inputs.to(model_engine.local_rank)
            labels = labels.to(model_engine.local_rank)
            loss = F.cross_entropy(model_engine(inputs), labels)
            model_engine.backward(loss)
            model_engine.step()
            step += 1
            if step % args.save_interval == 0 and rank == 0:
                model_engine.save_checkpoint(args.save_dir, tag=f"global_step{step}", client_state={"step": step})  # expect: RC101
                print(f"saved checkpoint at step {step}")
