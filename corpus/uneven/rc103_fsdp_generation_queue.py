"""Batched generation with an FSDP model drains each rank's own prompt list with `while pending:`; every forward all-gathers the parameters, so the rank with fewer prompts leaves and the rest hang."""
import argparse
import json

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


def encode(prompt: str) -> torch.Tensor:
    return torch.tensor([ord(c) % 1000 for c in prompt[:64]] + [0] * max(0, 64 - len(prompt)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--prompts", default="prompts.jsonl")
    parser.add_argument("--batch-size", type=int, default=8)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    with open(args.prompts) as f:
        prompts = [json.loads(line)["text"] for line in f]
    pending = prompts[rank::world_size]

    model = FSDP(nn.Sequential(nn.Embedding(1000, 256), nn.Linear(256, 1000)))
    results = []
    with torch.no_grad():
        while pending:  # expect: RC103
            chunk, pending = pending[:args.batch_size], pending[args.batch_size:]
            logits = model(torch.stack([encode(p) for p in chunk]))
            results.extend(logits.argmax(-1).tolist())
    torch.save(results, f"generations_rank{rank}.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
