"""A data fetcher that yields, once per global step, the micro-batches this rank keeps of the step
(those with enough loss tokens): how many it keeps differs per rank, but the fetcher yields once a
step on every rank, and the step's only collective (the loss all-reduce) is issued once a step.
The number of rounds of the consumer's loop is the number of steps, not a list's length."""
import torch
import torch.distributed as dist


def fetch(step_source, dp_rank, dp_size, min_tokens):
    for global_batch in step_source:
        kept = []
        for sample in global_batch[dp_rank::dp_size]:
            if int(sample["loss_mask"].sum()) >= min_tokens:
                kept.append(sample)
        yield kept


def train(step_source, min_tokens):
    rank, world = dist.get_rank(), dist.get_world_size()
    for step, micro_batches in enumerate(fetch(step_source, rank, world, min_tokens)):
        tokens = torch.zeros(1)
        for mb in micro_batches:
            tokens += mb["loss_mask"].sum()
        dist.all_reduce(tokens)
        if rank == 0:
            print(step, tokens.item())
