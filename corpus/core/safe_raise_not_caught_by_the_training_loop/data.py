"""A shard loader that raises on a flaky read; the collective after it is every rank's."""
import torch
import torch.distributed as dist


def load_step_batch(rank: int, step: int, shard_dir: str) -> torch.Tensor:
    batch = torch.load(f"{shard_dir}/batch_{rank}_{step}.pt")
    if rank == 0 and batch.numel() == 0:
        raise IOError(f"empty shard at step {step}")
    lengths = torch.tensor([batch.shape[0]])
    dist.all_reduce(lengths)
    return batch
