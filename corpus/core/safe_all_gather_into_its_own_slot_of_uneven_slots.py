"""Each rank owns a slot of a different size in the receive list and passes that slot as its
input: every rank's input has the size of its own slot, so the uneven all_gather lines up
(Megatron-LM gathers layer-wise parameters and checkpoint shards this way)."""
import torch
import torch.distributed as dist


def gather_layerwise(flat_sizes, group):
    rank = group.rank()
    buffer = torch.empty(sum(flat_sizes))
    slots = []
    offset = 0
    for size in flat_sizes:
        slots.append(buffer[offset : offset + size])
        offset += size
    mine = slots[rank]
    mine.fill_(float(rank))
    dist.all_gather(slots, slots[rank], group=group)
    dist.all_gather(list(slots), mine, group=group)
    return buffer
