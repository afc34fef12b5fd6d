"""The look-alike of safe_odd_and_even_ranks_barrier_in_two_statements.py: the second test is of
the rank modulo 3, not the complement of the first, so rank 3 (odd, and a multiple of 3) issues
two barriers and rank 2 none."""
import torch
import torch.distributed as dist


def write_in_two_turns(shard: torch.Tensor, path: str) -> None:
    rank = dist.get_rank()
    if rank % 2:
        torch.save(shard, f"{path}/odd_{rank}.pt")
        dist.barrier()  # expect: RC101
    if not rank % 3:
        torch.save(shard, f"{path}/third_{rank}.pt")
        dist.barrier()  # expect: RC101
