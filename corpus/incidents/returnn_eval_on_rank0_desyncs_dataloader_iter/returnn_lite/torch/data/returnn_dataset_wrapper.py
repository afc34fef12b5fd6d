"""Wraps a RETURNN dataset as a TorchData `IterDataPipe` (returnn/torch/data/returnn_dataset_wrapper.py).

Because the DataLoader sees an `IterDataPipe`, creating a DataLoader iterator in a distributed job
is itself collective: `_BaseDataLoaderIter.__init__` creates a gloo group (`dist.new_group`) and
broadcasts a shared seed from rank 0 (`_share_dist_seed`), on every `iter(data_loader)`.
"""
from __future__ import annotations

from typing import Callable, Dict, Iterable, Optional

import numpy
import torch.utils.data

from returnn_lite.datasets import Dataset as ReturnnDataset

ResetCallbackT = Callable[[], None]


class ReturnnDatasetResetMpSharedEpochCallback:
    """Resets the dataset to the epoch stored in a multiprocessing-shared value (data loader workers)."""

    def __init__(self, dataset: ReturnnDataset, epoch_mp_shared):
        self.dataset = dataset
        self.epoch_mp_shared = epoch_mp_shared

    def __call__(self):
        self.dataset.init_seq_order(epoch=self.epoch_mp_shared.value or 1)


class ReturnnDatasetIterDataPipe(torch.utils.data.IterDataPipe):
    """Converts a RETURNN dataset into a PyTorch iterable datapipe."""

    def __init__(self, returnn_dataset: ReturnnDataset, *, reset_callback: Optional[ResetCallbackT] = None):
        super().__init__()
        self._dataset = returnn_dataset
        self._reset_callback = reset_callback

    def reset(self):
        if self._reset_callback:
            self._reset_callback()

    def __iter__(self) -> Iterable[Dict[str, numpy.ndarray]]:
        self.reset()
        yield from self._dataset.iterate_seqs()

    def __getitem__(self, index):
        raise Exception(f"{self.__class__.__name__}.__getitem__ not supported")
