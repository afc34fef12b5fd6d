"""Sequence batch containers (trimmed from examples/commons/sequence_batch and
examples/commons/datasets/hstu_batch.py).

Part of the reconstruction of https://github.com/NVIDIA/recsys-examples/issues/361.
`num_candidates` is padded to `batch_size` by the dataset collate, while the
dense `labels` keep `actual_batch_size` rows: the two conventions the issue
describes as coexisting in BaseBatch.
"""
from dataclasses import dataclass, fields
from typing import Callable, List, Optional

import torch
import torch.nn.functional as F
from torchrec.sparse.jagged_tensor import KeyedJaggedTensor


def pad_tensor(t: torch.Tensor, target_len: int) -> torch.Tensor:
    pad = target_len - t.size(0)
    return F.pad(t, (0, pad)) if pad > 0 else t


@dataclass
class BaseBatch:
    features: KeyedJaggedTensor
    batch_size: int
    actual_batch_size: int
    labels: Optional[torch.Tensor] = None

    def _apply_to_tensors_or_kjt(self, fn: Callable, inplace: bool = False) -> "BaseBatch":
        target = self if inplace else self.__class__(**{f.name: getattr(self, f.name) for f in fields(self)})
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, (torch.Tensor, KeyedJaggedTensor)):
                setattr(target, f.name, fn(value))
        return target

    def to(self, device) -> "BaseBatch":
        return self._apply_to_tensors_or_kjt(lambda t: t.to(device, non_blocking=True))


@dataclass
class HSTUBatch(BaseBatch):
    num_candidates: Optional[torch.Tensor] = None

    @classmethod
    def collate(cls, samples: List[dict], batch_size: int, feature_names: List[str]) -> "HSTUBatch":
        actual_batch_size = len(samples)
        lengths, values = [], []
        for name in feature_names:
            for s in samples:
                lengths.append(len(s[name]))
                values.extend(s[name])
            lengths.extend([0] * (batch_size - actual_batch_size))
        features = KeyedJaggedTensor.from_lengths_sync(
            keys=feature_names,
            values=torch.tensor(values, dtype=torch.int64),
            lengths=torch.tensor(lengths, dtype=torch.int64),
        )
        labels = torch.tensor([s["label"] for s in samples], dtype=torch.float32)
        num_candidates = torch.tensor([s["num_candidates"] for s in samples], dtype=torch.int64)
        return cls(
            features=features,
            batch_size=batch_size,
            actual_batch_size=actual_batch_size,
            labels=labels,
            num_candidates=pad_tensor(num_candidates, batch_size),
        )
