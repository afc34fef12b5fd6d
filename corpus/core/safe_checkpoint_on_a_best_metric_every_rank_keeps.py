"""The look-alike of rc101_checkpoint_on_a_best_metric_kept_on_rank_zero.py: every rank updates
`self.best` from the all-reduced score (only the print is rank 0's), so every rank compares the
same numbers and enters the gather together.
"""
import torch
import torch.distributed as dist


class Trainer:
    def __init__(self, model):
        self.model = model
        self.best = float("inf")

    def validate(self, loss):
        score = torch.tensor([loss])
        dist.all_reduce(score)
        if dist.get_rank() == 0:
            print("val loss", score.item())
        self.best = min(self.best, score.item())
        return score.item()

    def maybe_save(self, score):
        if score <= self.best:
            shards = [None] * dist.get_world_size()
            dist.all_gather_object(shards, self.model.state_dict())
            if dist.get_rank() == 0:
                torch.save(shards, "best.pt")
