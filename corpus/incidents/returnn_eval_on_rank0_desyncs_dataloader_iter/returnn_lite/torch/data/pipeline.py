"""Batching and collation on top of the dataset datapipe (returnn/torch/data/pipeline.py)."""
from __future__ import annotations

from typing import Dict, List, Union

import numpy
import torch
import torch.utils.data


def create_tensor(array: numpy.ndarray) -> Union[torch.Tensor, numpy.ndarray]:
    if array.dtype.kind in "UO":  # strings, e.g. the seq tag
        return array
    if array.dtype == numpy.uint32:
        array = numpy.asarray(array, dtype=numpy.int64)
    return torch.tensor(array)


def collate_batch(batch: List[Dict[str, numpy.ndarray]]) -> Dict[str, Union[torch.Tensor, numpy.ndarray]]:
    assert batch, "batch is empty?"
    res = {}
    for key in batch[0].keys():
        ls = [create_tensor(sample[key]) for sample in batch]
        if isinstance(ls[0], torch.Tensor):
            res[key] = torch.nn.utils.rnn.pad_sequence(ls, batch_first=True, padding_value=0)
            res[f"{key}:seq_len"] = torch.tensor([v.shape[0] for v in ls], dtype=torch.int32)
        else:
            res[key] = numpy.array(ls)
    return res


class BatchingIterDataPipe(torch.utils.data.IterDataPipe):
    """Groups sequences into batches of at most `batch_size` padded frames and `max_seqs` sequences."""

    def __init__(self, dataset: torch.utils.data.IterableDataset, batch_size: int = 1, max_seqs: int = -1):
        super().__init__()
        self._dataset = dataset
        self._max_batch_size = batch_size
        self._max_seqs = max_seqs if max_seqs > 0 else float("inf")

    def __iter__(self):
        current_batch: List[Dict[str, numpy.ndarray]] = []
        current_max_len = 0
        for data_dict in self._dataset:
            seq_len = data_dict["data"].shape[0]
            new_max_len = max(current_max_len, seq_len)
            if current_batch and (len(current_batch) >= self._max_seqs
                                  or new_max_len * (len(current_batch) + 1) > self._max_batch_size):
                yield current_batch
                current_batch, new_max_len = [], seq_len
            current_batch.append(data_dict)
            current_max_len = new_max_len
        if current_batch:
            yield current_batch


class LenFilterDataPipe(torch.utils.data.IterDataPipe):
    def __init__(self, dataset, *, min_seq_length=None, max_seq_length=None):
        super().__init__()
        self._dataset = dataset
        self._min = min_seq_length or 0
        self._max = max_seq_length or float("inf")

    def __iter__(self):
        for data_dict in self._dataset:
            if self._min <= data_dict["data"].shape[0] <= self._max:
                yield data_dict
