"""The same fetcher, but the consumer all-reduces once per kept micro-batch: the inner loop runs as
many rounds as this rank kept, and the ranks that kept fewer stop issuing the all-reduce the others
still wait in (lightseekorg/TorchSpec#126's shape, with the collective written out)."""
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
        for mb in micro_batches:  # expect: RC103
            tokens = mb["loss_mask"].sum().reshape(1).float()
            dist.all_reduce(tokens)
