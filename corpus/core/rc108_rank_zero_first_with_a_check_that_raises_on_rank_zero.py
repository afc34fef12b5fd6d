"""The look-alike of safe_rank_zero_first_with_a_check_that_raises_on_every_rank.py where only
rank 0 checks what it loaded: when the check fails, rank 0 dies before it releases the others,
who wait in the first barrier (under a launcher that does not tear the job down, a hang)."""
import click
import torch
import torch.distributed as dist


def load_dataset(path, expected):
    # Rank 0 goes first.
    if dist.get_rank() != 0:
        torch.distributed.barrier()
    data = torch.load(path)
    if dist.get_rank() == 0:
        if len(data) < expected:
            raise click.ClickException(f"found {len(data)} images, but expected at least {expected}")  # expect: RC108
        torch.distributed.barrier()
    return data
