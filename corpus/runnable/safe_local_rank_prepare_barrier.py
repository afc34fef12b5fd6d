"""The "local rank 0 first" idiom: the other ranks wait at a barrier while local rank 0 prepares
the vocabulary, and local rank 0 releases them with the matching barrier afterwards."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn

CORPUS = "the quick brown fox jumps over the lazy dog the end".split()


def build_vocab(words):
    return {w: i for i, w in enumerate(sorted(set(words)))}


def main():
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    dist.init_process_group("gloo")
    if local_rank != 0:
        dist.barrier()
    vocab = build_vocab(CORPUS)
    if local_rank == 0:
        dist.barrier()
    embedding = nn.Embedding(16, 4)
    ids = torch.tensor([vocab.get(w, 0) for w in CORPUS[:4]])
    loss = embedding(ids).pow(2).mean()
    loss.backward()
    dist.all_reduce(embedding.weight.grad)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
