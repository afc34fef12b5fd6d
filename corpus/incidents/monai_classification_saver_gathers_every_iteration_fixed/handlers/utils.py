"""Distributed helpers of the handlers (monai/handlers/utils.py at v0.5)."""
from typing import List

import ignite.distributed as idist
import torch


def evenly_divisible_all_gather(data: torch.Tensor) -> torch.Tensor:
    """Pad the first dim to the longest rank's length, all_gather, and drop the padding."""
    if not isinstance(data, torch.Tensor):
        raise ValueError("input data must be PyTorch Tensor.")
    if idist.get_world_size() <= 1:
        return data
    # make sure the data is evenly-divisible on multi-GPUs
    length = data.shape[0]
    all_lens = idist.all_gather(length)
    max_len = max(all_lens)
    if length < max_len:
        size = [max_len - length] + list(data.shape[1:])
        data = torch.cat([data, data.new_full(size, 0)], dim=0)
    # all gather across all processes
    data = idist.all_gather(data)
    # delete the padding NaN items
    return torch.cat([data[i * max_len: i * max_len + n, ...] for i, n in enumerate(all_lens)], dim=0)


def string_list_all_gather(strings: List[str]) -> List[str]:
    """All gather a list of strings (each item travels in its own all_gather)."""
    world_size = idist.get_world_size()
    if world_size <= 1:
        return strings
    result: List[List[str]] = [[] for _ in range(world_size)]
    length = len(strings)
    all_lens = idist.all_gather(length)
    max_len = max(all_lens)
    # pad the item to make sure the same length
    if length < max_len:
        strings = strings + ["" for _ in range(max_len - length)]
    for s in strings:
        gathered = idist.all_gather(s)
        for i, g in enumerate(gathered):
            if len(g) > 0:
                result[i].append(g)
    return [i for k in result for i in k]
