"""Megatron-style tied-embedding sync: `if parallel_state.is_rank_in_embedding_group():` guards an all_reduce on `parallel_state.get_embedding_group()`, whose members are exactly the ranks that pass the test."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn

import parallel_state


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--vocab", type=int, default=1000)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    parallel_state.initialize_model_parallel()
    emb = nn.Embedding(args.vocab, 32)
    loss = emb(torch.randint(0, args.vocab, (16,))).pow(2).mean()
    loss.backward()
    if parallel_state.is_rank_in_embedding_group():
        dist.all_reduce(emb.weight.grad, group=parallel_state.get_embedding_group())
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
