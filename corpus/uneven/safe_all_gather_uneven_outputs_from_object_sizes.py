"""Embeddings of different lengths are all_gathered into buffers sized from the lengths shared with all_gather_object, so each buffer matches its sender (NCCL accepts uneven all_gather; gloo errors, never hangs)."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dim", type=int, default=32)
    args = parser.parse_args()

    dist.init_process_group("nccl")
    rank = dist.get_rank()
    encoder = nn.Linear(128, args.dim).cuda()
    docs = torch.load(f"docs_rank{rank}.pt").cuda()
    with torch.no_grad():
        local = encoder(docs).flatten()

    sizes = [0] * dist.get_world_size()
    dist.all_gather_object(sizes, local.numel())
    outputs = [torch.empty(n, device=local.device) for n in sizes]
    dist.all_gather(outputs, local)
    if rank == 0:
        index = torch.cat(outputs).view(-1, args.dim)
        torch.save(index.cpu(), "doc_index.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
