"""Megatron's distributed optimizer (kept in DeepSpeed-Domino and Megatron-DeepSpeed): each grad
buffer is cut into world-size shards of one width, the shards travel back to the caller in a list
of (index, dtype, buffer, shards) tuples, and each rank reduce-scatters into its own shard. The
shards have one shape whichever a rank takes, so the collective matches.
"""
import torch.distributed as dist


def buffer_dp_views(model_buffers):
    world_size = dist.get_world_size()
    view_items = []
    for model_index, buffers in enumerate(model_buffers):
        for dtype, buf in buffers.items():
            assert buf.numel() % world_size == 0
            shard_size = int(buf.numel() / world_size)
            buf_views = [buf[(r * shard_size):((r + 1) * shard_size)] for r in range(world_size)]
            view_items.append((model_index, dtype, buf, buf_views))
    return view_items


def reduce_model_grads(model_buffers):
    rank = dist.get_rank()
    for index, (model_index, dtype, gbuf, gbuf_views) in enumerate(buffer_dp_views(model_buffers)):
        dist.reduce_scatter_tensor(gbuf_views[rank], gbuf)
