"""Odd ranks and even ranks take turns writing a shard file, each group under its own test of
the rank's parity, one statement after the other; both groups end their turn in the barrier, so
every rank issues exactly one."""
import torch
import torch.distributed as dist


def write_in_two_turns(shard: torch.Tensor, path: str) -> None:
    rank = dist.get_rank()
    if rank % 2:
        torch.save(shard, f"{path}/odd_{rank}.pt")
        dist.barrier()
    if not rank % 2:
        torch.save(shard, f"{path}/even_{rank}.pt")
        dist.barrier()
