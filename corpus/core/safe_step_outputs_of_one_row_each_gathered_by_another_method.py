"""Look-alike of rc104_step_outputs_kept_by_one_method_gathered_by_another: each step keeps one
row (the masked mean, shaped (1,)), so the concatenation has one row per step on every rank
(the sampler pads the shards to equal lengths) and the all-gather matches.
"""
import torch
import torch.distributed as dist


class MaskedRecall:
    def __init__(self):
        self.scores = []

    def update(self, batch):
        keep = batch["valid"].bool()
        self.scores.append(batch["score"][keep].mean().unsqueeze(0))

    def compute(self):
        local = torch.cat(self.scores)
        gathered = [torch.empty_like(local) for _ in range(dist.get_world_size())]
        dist.all_gather(gathered, local)
        return torch.cat(gathered).mean()
