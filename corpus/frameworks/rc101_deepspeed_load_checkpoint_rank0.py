"""Resuming: only rank 0 looks for the checkpoint and loads it; under ZeRO load_checkpoint re-gathers
the optimizer partitions across data-parallel ranks, so it must run everywhere."""
import os

import deepspeed
import torch
import torch.distributed as dist


def maybe_resume(engine, ckpt_dir: str) -> int:
    step = 0
    if dist.get_rank() == 0 and os.path.isdir(ckpt_dir):
        _, client_state = engine.load_checkpoint(ckpt_dir)  # expect: RC101
        step = client_state["step"]
    return step


def main(config: dict) -> None:
    model = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(256, 8), num_layers=4)
    engine, *_ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config)
    start = maybe_resume(engine, "ckpt")
    print(f"resuming from step {start}")
