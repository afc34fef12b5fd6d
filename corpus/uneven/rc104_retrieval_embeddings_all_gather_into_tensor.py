"""Retrieval eval embeds each rank's own document files and all_gather_into_tensor()s the result, sizing the output as world_size times the local count; the local counts differ, so the shapes do not match."""
import argparse
import glob

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs-glob", default="docs/*.pt")
    parser.add_argument("--dim", type=int, default=128)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    encoder = nn.Linear(768, args.dim)
    encoder.load_state_dict(torch.load("encoder.pt"))
    embs = []
    with torch.no_grad():
        for path in sorted(glob.glob(args.docs_glob))[rank::world_size]:
            embs.append(nn.functional.normalize(encoder(torch.load(path)), dim=-1))
    local = torch.cat(embs)
    index = local.new_empty(world_size * local.shape[0], args.dim)
    dist.all_gather_into_tensor(index, local)  # expect: RC104
    queries = nn.functional.normalize(encoder(torch.load("queries.pt")), dim=-1)
    top = (queries @ index.T).topk(10).indices
    if rank == 0:
        torch.save(top, "top10.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
