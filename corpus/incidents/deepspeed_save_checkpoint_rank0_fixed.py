"""Safe twin of deepspeed_save_checkpoint_rank0.py: every rank calls
`model_engine.save_checkpoint`; only the message is printed by rank 0.

Thread: https://github.com/deepspeedai/DeepSpeed/issues/2993
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
            if step % args.save_interval == 0:
                model_engine.save_checkpoint(args.save_dir, tag=f"global_step{step}", client_state={"step": step})
                if rank == 0:
                    print(f"saved checkpoint at step {step}")
