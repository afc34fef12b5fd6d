"""A collective inside a "rank 0 first" block: torch_distributed_zero_first() runs the body on local
rank 0 while the other ranks wait in its first barrier, so rank 0's all_reduce of the dataset size
meets their barrier (on gloo both time out: "Timed out waiting ... for recv"). The yolov5-style
manager alone is balanced (safe_zero_first_context_manager_same_file.py); the body is what breaks it.
"""
import argparse
import os
from contextlib import contextmanager

import torch
import torch.distributed as dist
import torch.nn as nn


@contextmanager
def torch_distributed_zero_first(local_rank: int):
    if local_rank != 0:
        dist.barrier()
    yield
    if local_rank == 0:
        dist.barrier()


def build_dataset(root: str) -> torch.Tensor:
    path = os.path.join(root, "tokens.pt")
    if not os.path.exists(path):
        os.makedirs(root, exist_ok=True)
        torch.save(torch.randint(0, 500, (10_000,)), path)
    return torch.load(path)


def global_token_count(tokens: torch.Tensor) -> int:
    count = torch.tensor([tokens.numel()])
    dist.all_reduce(count)
    return int(count.item())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-root", default="data")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    local_rank = int(os.environ["LOCAL_RANK"])
    with torch_distributed_zero_first(local_rank):  # expect: RC106
        tokens = build_dataset(args.data_root)
        total = global_token_count(tokens)
    print(f"{total} tokens over all ranks")
    emb = nn.Embedding(500, 32)
    opt = torch.optim.Adam(emb.parameters())
    loss = emb(tokens[:16]).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
