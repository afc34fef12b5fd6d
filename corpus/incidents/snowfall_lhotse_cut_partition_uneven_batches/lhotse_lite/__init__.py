"""Trimmed copy of `lhotse.dataset.sampling` as snowfall used it in April 2021 (lhotse before
lhotse-speech/lhotse#267): the cut samplers that split a CutSet between DDP workers."""
from .sampling import CutSampler, SingleCutSampler, partition_cut_ids

__all__ = ["CutSampler", "SingleCutSampler", "partition_cut_ids"]
