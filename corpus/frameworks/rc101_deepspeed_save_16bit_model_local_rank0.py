"""End of a ZeRO-3 fine-tune: the consolidated 16-bit weights are saved on local rank 0 only, but
save_16bit_model all-gathers every partition on every rank first."""
import argparse

import deepspeed
import torch


def finish(engine, args) -> None:
    if args.local_rank == 0:
        engine.save_16bit_model(args.output_dir, "pytorch_model.bin")  # expect: RC101


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=0)
    parser.add_argument("--output_dir", default="out")
    parser = deepspeed.add_config_arguments(parser)
    args = parser.parse_args()
    model = torch.nn.Linear(4096, 4096)
    engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
    finish(engine, args)
