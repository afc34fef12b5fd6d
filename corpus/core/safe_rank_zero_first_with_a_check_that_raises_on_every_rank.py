"""EDM's "rank 0 goes first" (fid.py, generate.py): the other ranks wait in a barrier while rank 0
downloads and loads, then rank 0 releases them with a barrier of its own. Between the two,
checks of what was loaded raise when they fail: every rank makes them on the same files, so
either all raise (the launcher reports the error and ends the job) or none does, and the
barriers pair up. The look-alike whose check is made on rank 0 only is in
rc108_rank_zero_first_with_a_check_that_raises_on_rank_zero.py."""
import click
import torch
import torch.distributed as dist


def load_dataset(path, expected):
    # Rank 0 goes first.
    if dist.get_rank() != 0:
        torch.distributed.barrier()
    data = torch.load(path)
    if expected is not None and len(data) < expected:
        raise click.ClickException(f"found {len(data)} images, but expected at least {expected}")
    if len(data) < 2:
        raise click.ClickException(f"found {len(data)} images, but need at least 2")
    # Other ranks follow.
    if dist.get_rank() == 0:
        torch.distributed.barrier()
    return data
