"""Look-alike of safe_state_saved_by_stage_and_tensor_rank_zero_before_a_data_parallel_barrier:
the early return keeps data-parallel rank 0 only, and the barrier is over the data-parallel
group, whose other members returned: data-parallel rank 0 waits there forever.
"""
import torch
import torch.distributed as dist


def get_pg_rank(group=None):
    if not dist.is_initialized() or group is None:
        return 0
    return group.rank()


def save_dataloader_state(train_iterator, save_path, pp_group, tp_group, dp_group):
    first_rank = get_pg_rank(dp_group) == 0
    if not first_rank:
        return  # expect: RC102
    state = train_iterator.save_state()
    dist.barrier(group=dp_group)
    torch.save(state, f"{save_path}/dataloader_state.pt")
