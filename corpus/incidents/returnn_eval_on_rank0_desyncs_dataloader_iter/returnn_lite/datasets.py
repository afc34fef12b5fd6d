"""Minimal RETURNN-style datasets: a sequence order per epoch, then sequences read one by one as
dicts of numpy arrays (`data` features, `classes` targets)."""
from __future__ import annotations

from typing import Dict, Iterator, List, Optional

import numpy


class Dataset:
    def __init__(self, name: str, *, partition_rank: int = 0, partition_size: int = 1, seed: int = 42):
        self.name = name
        self.partition_rank = partition_rank
        self.partition_size = partition_size
        self.seed = seed
        self.epoch: Optional[int] = None
        self._seq_order: List[int] = []

    def num_seqs_total(self) -> int:
        raise NotImplementedError

    def get_seq(self, seq_idx: int) -> Dict[str, numpy.ndarray]:
        raise NotImplementedError

    def init_seq_order(self, epoch: Optional[int] = None):
        """Shuffled order for the epoch; in multi-GPU training every worker reads its own partition."""
        self.epoch = epoch
        order = numpy.random.RandomState(self.seed + (epoch or 0)).permutation(self.num_seqs_total())
        self._seq_order = [int(i) for i in order[self.partition_rank::self.partition_size]]

    def iterate_seqs(self) -> Iterator[Dict[str, numpy.ndarray]]:
        for seq_idx in self._seq_order:
            yield self.get_seq(seq_idx)


class NumpyFeatureDataset(Dataset):
    """Features and label sequences stored in a single .npz file (`features_<i>`, `labels_<i>`)."""

    def __init__(self, path: str, **kwargs):
        super().__init__(**kwargs)
        self._npz = numpy.load(path)
        self._num_seqs = len([k for k in self._npz.files if k.startswith("features_")])

    def num_seqs_total(self) -> int:
        return self._num_seqs

    def get_seq(self, seq_idx: int) -> Dict[str, numpy.ndarray]:
        return {
            "data": self._npz[f"features_{seq_idx}"].astype(numpy.float32),
            "classes": self._npz[f"labels_{seq_idx}"].astype(numpy.int32),
            "seq_tag": numpy.array(f"{self.name}-{seq_idx}", dtype=object),
        }


def init_dataset(opts: dict, *, default_kwargs: Optional[dict] = None) -> Dataset:
    opts = dict(opts)
    cls = {"NumpyFeatureDataset": NumpyFeatureDataset}[opts.pop("class")]
    return cls(**{**(default_kwargs or {}), **opts})
