"""A broadcast whose root is chosen by a branch on the rank's parity: odd ranks name root 1, even
ranks root 0, so the two halves of the job wait for different sources (MPI Bugs Initiative's
root mismatch, as a seed exchange writes it). The look-alikes branch on the step's parity, which
every rank shares, and on the world size."""
import torch
import torch.distributed as dist


def share_seed(step: int) -> torch.Tensor:
    rank = dist.get_rank()
    seed = torch.tensor([1234 + rank])
    root = 0
    if rank % 2:
        root = 1
    dist.broadcast(seed, src=root)  # expect: RC104
    return seed


def alternate_root(step: int) -> torch.Tensor:
    seed = torch.tensor([step])
    root = 0
    if step % 2:
        root = 1
    dist.broadcast(seed, src=root)
    return seed


def reduce_op_for_world(counts: torch.Tensor) -> None:
    op = dist.ReduceOp.SUM
    if dist.get_world_size() % 2:
        op = dist.ReduceOp.MAX
    dist.all_reduce(counts, op=op)
