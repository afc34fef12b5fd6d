"""Look-alikes of a callable object under a rank test: the communicating reward model is called on
every rank (trlx's fix) and only its result is used on the main process; a callable object whose
`__call__` issues no collective may be called on rank 0 alone."""
import torch
import torch.distributed as dist


class RewardModel:
    def __call__(self, samples):
        scores = torch.tensor([float(len(s)) for s in samples])
        dist.all_reduce(scores)
        return scores


class Tokenizer:
    def __call__(self, texts):
        return [t.split() for t in texts]


class PPOTrainer:
    def __init__(self, reward_fn, tokenizer):
        self.reward_fn = reward_fn
        self.tokenizer = tokenizer

    def make_experience(self, samples):
        scores = self.reward_fn(samples)
        if dist.get_rank() == 0:
            print(self.tokenizer(samples), scores)
        return scores


def main(samples):
    PPOTrainer(RewardModel(), Tokenizer()).make_experience(samples)
