"""The look-alike of safe_reduce_scatter_into_this_rank_equal_shard.py: the flat buffer is cut at
parameter boundaries, so the shards have the widths of the parameters each rank owns. A rank's
own shard then differs in size from the others', which `all_gather_into_tensor` does not allow."""
import torch
import torch.distributed as dist


def shards_at_boundaries(buffer: torch.Tensor, boundaries):
    return [buffer[boundaries[i] : boundaries[i + 1]] for i in range(len(boundaries) - 1)]


def gather_params(buffer: torch.Tensor, boundaries, out: torch.Tensor) -> None:
    rank = dist.get_rank()
    shards = shards_at_boundaries(buffer, boundaries)
    dist.all_gather_into_tensor(out, shards[rank])  # expect: RC104
