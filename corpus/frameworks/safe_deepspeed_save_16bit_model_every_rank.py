"""The fix: every rank calls save_16bit_model; DeepSpeed writes the file from rank 0 itself."""
import argparse

import deepspeed
import torch


def finish(engine, args) -> None:
    engine.save_16bit_model(args.output_dir, "pytorch_model.bin")
    if args.local_rank == 0:
        print(f"saved to {args.output_dir}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=0)
    parser.add_argument("--output_dir", default="out")
    parser = deepspeed.add_config_arguments(parser)
    args = parser.parse_args()
    model = torch.nn.Linear(4096, 4096)
    engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
    finish(engine, args)
