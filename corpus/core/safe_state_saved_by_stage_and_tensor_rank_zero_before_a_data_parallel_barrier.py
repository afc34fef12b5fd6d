"""Megatron-LM's dataloader-state save (training/checkpointing.py): only pipeline rank 0 and
tensor-parallel rank 0 go on, and they meet at a barrier over the data-parallel group. Every
member of a data-parallel group holds the same pipeline and tensor-parallel coordinates, so a
group takes the early return whole or not at all: no rank of it waits.

The groups come in as parameters named for the mesh dimension they span (`pp_group`,
`tp_group`, `dp_group`), and the rank in each is read through a helper (`group.rank()`).
"""
import torch
import torch.distributed as dist


def get_pg_rank(group=None):
    if not dist.is_initialized() or group is None:
        return 0
    return group.rank()


def save_dataloader_state(train_iterator, save_path, pp_group, tp_group, dp_group):
    first_rank = get_pg_rank(pp_group) == 0 and get_pg_rank(tp_group) == 0
    if not first_rank:
        return
    state = train_iterator.save_state()
    dist.barrier(group=dp_group)
    torch.save(state, f"{save_path}/dataloader_dprank{get_pg_rank(dp_group):03d}.pt")
