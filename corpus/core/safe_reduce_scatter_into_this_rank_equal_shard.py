"""A distributed optimizer's grad buffer (Megatron's `shard_buffer`): the buffer is padded to a
multiple of the data-parallel size and cut into shards of one width, one per rank; each rank
reduce-scatters into its own shard. Whichever shard a rank takes, it is as wide as the others'."""
import torch
import torch.distributed as dist


def shard_buffer(buffer: torch.Tensor, world_size: int):
    assert buffer.numel() % world_size == 0
    shard_size = buffer.numel() // world_size
    return [buffer[(r * shard_size) : ((r + 1) * shard_size)] for r in range(world_size)]


class GradBuffer:
    def __init__(self, numel: int, group=None):
        self.group = group
        self.rank = dist.get_rank(group)
        world_size = dist.get_world_size(group)
        padded = (numel + world_size - 1) // world_size * world_size
        self.data = torch.zeros(padded)
        self.shards = shard_buffer(self.data, world_size)

    def reduce_scatter(self) -> torch.Tensor:
        local = self.shards[self.rank]
        dist.reduce_scatter_tensor(local, self.data, group=self.group)
        return local
