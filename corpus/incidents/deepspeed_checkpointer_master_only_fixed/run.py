"""Entry point: builds the DeepSpeed trainer with the DeepSpeed checkpointer."""
import argparse

import deepspeed

from checkpointer import DeepspeedCheckpointer
from trainer import DeepspeedTrainer


def main(model, optimizer, data_loader):
    parser = argparse.ArgumentParser()
    parser.add_argument("--serialization_dir", required=True)
    parser.add_argument("--deepspeed_config", default="ds_config.json")
    parser.add_argument("--local_rank", type=int, default=-1)
    args = parser.parse_args()
    deepspeed.init_distributed()
    trainer = DeepspeedTrainer(
        model, optimizer, data_loader, args.deepspeed_config, checkpointer=DeepspeedCheckpointer(args.serialization_dir)
    )
    trainer._try_train()
