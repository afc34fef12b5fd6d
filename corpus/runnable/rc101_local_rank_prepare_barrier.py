"""Local rank 0 prepares the vocabulary and then calls the barrier that should release the other
ranks, but the others never wait at it: they go straight to training."""
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
    vocab = build_vocab(CORPUS[: len(CORPUS) // 2])
    if local_rank == 0:
        vocab = build_vocab(CORPUS)
        dist.barrier()  # expect: RC101
    embedding = nn.Embedding(16, 4)
    ids = torch.tensor([vocab.get(w, 0) for w in CORPUS[:4]])
    loss = embedding(ids).pow(2).mean()
    loss.backward()
    dist.all_reduce(embedding.weight.grad)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
