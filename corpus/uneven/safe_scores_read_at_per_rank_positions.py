"""A reward model's score is read at each sequence's last real token,
`rewards[torch.arange(batch_size), last_index]`: the index arrays pick per-rank positions, but
the result has their shape, one score per sequence of the fixed-size batch, so the gather of the
scores lines up on every rank."""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader


def score_batches(reward_model, dataset, batch_size):
    loader = DataLoader(dataset, batch_size=batch_size, drop_last=True)
    for batch in loader:
        rewards = torch.zeros(batch_size, batch["input_ids"].size(1))
        rewards += reward_model(batch["input_ids"])
        last_index = batch["attention_mask"].sum(dim=1) - 1
        scores = rewards[torch.arange(batch_size), last_index]
        gathered = [torch.zeros(batch_size) for _ in range(dist.get_world_size())]
        dist.all_gather(gathered, scores)
