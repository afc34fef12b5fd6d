"""The same scores, read only for the sequences that finished (`rewards[finished, last_index[finished]]`,
`finished` the positions of this rank's sequences that produced an end token): how many there are
is this rank's own, so the all_gather gets tensors of different lengths."""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader


def score_batches(reward_model, dataset, batch_size, eos_token_id):
    loader = DataLoader(dataset, batch_size=batch_size, drop_last=True)
    for batch in loader:
        rewards = torch.zeros(batch_size, batch["input_ids"].size(1))
        rewards += reward_model(batch["input_ids"])
        last_index = batch["attention_mask"].sum(dim=1) - 1
        finished = torch.nonzero(batch["input_ids"][:, -1] == eos_token_id).squeeze(-1)
        scores = rewards[finished, last_index[finished]]
        gathered = [torch.zeros_like(scores) for _ in range(dist.get_world_size())]
        dist.all_gather(gathered, scores)  # expect: RC104
