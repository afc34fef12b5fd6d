"""The trainer keeps the best validation score in `self.best`, but only rank 0 updates it (it
is the rank that logs); `maybe_save` then compares the score with `self.best` on every rank and
gathers the sharded state dict only where it improved. Rank 0's `self.best` follows the run,
the others' stays at its initial value, so after the first improvement the ranks disagree and
the gather waits for the ranks that did not enter it. Look-alike:
safe_checkpoint_on_a_best_metric_every_rank_keeps.py.
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
            dist.all_gather_object(shards, self.model.state_dict())  # expect: RC101
            if dist.get_rank() == 0:
                torch.save(shards, "best.pt")
