"""A reward model kept as a callable object (trlx stores `self.reward_fn`, an instance whose
`__call__` scores the samples and all-reduces the scores) is called on the main process only;
the other ranks never enter the all_reduce inside `__call__`. Also called through a local name.
The look-alikes are in safe_callable_object_called_everywhere.py."""
import torch
import torch.distributed as dist


class RewardModel:
    def __init__(self, scale):
        self.scale = scale

    def __call__(self, samples):
        scores = torch.tensor([len(s) * self.scale for s in samples], dtype=torch.float)
        dist.all_reduce(scores)
        return scores / dist.get_world_size()


class PPOTrainer:
    def __init__(self, reward_fn):
        self.reward_fn = reward_fn

    def make_experience(self, samples):
        if dist.get_rank() == 0:
            return self.reward_fn(samples)  # expect: RC101
        return None


def main(samples):
    trainer = PPOTrainer(RewardModel(2.0))
    trainer.make_experience(samples)
    judge = RewardModel(1.0)
    if dist.get_rank() == 0:
        judge(samples)  # expect: RC101
