"""Fix for FSDP generation over uneven prompt lists: the batch count is all-reduced with MAX and ranks that ran out feed a dummy batch, so every rank runs the same number of forwards."""
import argparse
import json
import math

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
    with open(args.prompts) as f:
        prompts = [json.loads(line)["text"] for line in f]
    mine = prompts[rank::dist.get_world_size()]
    n_batches = torch.tensor([math.ceil(len(mine) / args.batch_size)])
    dist.all_reduce(n_batches, op=dist.ReduceOp.MAX)

    model = FSDP(nn.Sequential(nn.Embedding(1000, 256), nn.Linear(256, 1000)))
    results = []
    with torch.no_grad():
        for b in range(int(n_batches.item())):
            chunk = mine[b * args.batch_size:(b + 1) * args.batch_size]
            inputs = torch.stack([encode(p) for p in chunk or [""]])
            logits = model(inputs)
            if chunk:
                results.extend(logits.argmax(-1).tolist())
    torch.save(results, f"generations_rank{rank}.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
