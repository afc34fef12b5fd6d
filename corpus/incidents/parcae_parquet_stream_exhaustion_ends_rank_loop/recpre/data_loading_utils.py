"""Packing wrapper (reconstruction of recpre/data_loading_utils.py's PackedIterableDataset, added by #11)."""
import torch
from torch.utils.data import IterableDataset


class PackedIterableDataset(IterableDataset):
    def __init__(self, dataset, block_size, eos_id):
        self.dataset = dataset
        self.block_size = block_size
        self.eos_id = eos_id

    def __iter__(self):
        buffer = []
        for ids in self.dataset:  # ends when the inner stream ends, nothing is raised
            buffer.extend(ids.tolist() + [self.eos_id])
            while len(buffer) >= self.block_size + 1:
                chunk, buffer = buffer[: self.block_size + 1], buffer[self.block_size + 1:]
                chunk = torch.tensor(chunk, dtype=torch.long)
                yield chunk[:-1], chunk[1:], 0

    def state_dict(self):
        return self.dataset._state
