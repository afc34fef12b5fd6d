"""A metric object keeps each step's masked predictions in a list; `compute` concatenates them
and all-gathers the result. A boolean mask keeps a data-dependent number of rows, so the ranks
gather tensors of different lengths and the collective hangs (or fails in NCCL).

The list is filled in one method (`update`, once per evaluation step) and read in another
(`compute`, at the end of the epoch): the items' shapes reach `compute` through the attribute.
"""
import torch
import torch.distributed as dist


class MaskedRecall:
    def __init__(self):
        self.scores = []

    def update(self, batch):
        keep = batch["valid"].bool()
        self.scores.append(batch["score"][keep])

    def compute(self):
        local = torch.cat(self.scores)
        gathered = [torch.empty_like(local) for _ in range(dist.get_world_size())]
        dist.all_gather(gathered, local)  # expect: RC104
        return torch.cat(gathered).mean()
