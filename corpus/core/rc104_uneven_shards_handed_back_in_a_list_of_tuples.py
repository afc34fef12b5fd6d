"""Look-alike of safe_equal_shards_handed_back_in_a_list_of_tuples: the shards are cut at
parameter boundaries (`bounds`), so they differ in length, and the reduce-scatter into this
rank's own shard gets a different shape on each rank.
"""
import torch.distributed as dist


def buffer_dp_views(model_buffers, bounds):
    world_size = dist.get_world_size()
    view_items = []
    for model_index, buffers in enumerate(model_buffers):
        for dtype, buf in buffers.items():
            buf_views = [buf[bounds[r]:bounds[r + 1]] for r in range(world_size)]
            view_items.append((model_index, dtype, buf, buf_views))
    return view_items


def reduce_model_grads(model_buffers, bounds):
    rank = dist.get_rank()
    for index, (model_index, dtype, gbuf, gbuf_views) in enumerate(buffer_dp_views(model_buffers, bounds)):
        dist.reduce_scatter_tensor(gbuf_views[rank], gbuf)  # expect: RC104
