"""The collate function is an object (a dataclass with `__call__`, as Hugging Face-style
collators are written): it pads the token ids to the longest sample of the batch, so each rank's
batch is as wide as its own longest sample, and gathering them unpadded across ranks
mismatches."""
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


@dataclass
class PadToLongest:
    pad_token_id: int = 0

    def __call__(self, features):
        return pad_sequence([torch.tensor(f["input_ids"]) for f in features], batch_first=True, padding_value=self.pad_token_id)


def evaluate(model, dataset):
    loader = DataLoader(dataset, batch_size=8, sampler=DistributedSampler(dataset), collate_fn=PadToLongest(pad_token_id=0))
    for ids in loader:
        gathered = [torch.zeros_like(ids) for _ in range(dist.get_world_size())]
        dist.all_gather(gathered, ids)  # expect: RC104
