"""A shard reader with its own exception class, derived from a project base error."""
import torch
import torch.distributed as dist


class ReaderError(Exception):
    pass


class EmptyShardError(ReaderError):
    pass


def read_shard(rank: int, step: int) -> torch.Tensor:
    batch = torch.load(f"shards/{rank}/{step}.pt")
    if batch.numel() == 0:
        raise EmptyShardError(f"rank {rank}: empty shard at step {step}")  # expect: RC102
    counts = torch.tensor([batch.shape[0]])
    dist.all_reduce(counts)
    return batch
