"""Trimmed copy of `lhotse.dataset.sampling` with lhotse-speech/lhotse#267: the cut samplers
return the same number of batches on every DDP worker."""
from .sampling import CutSampler, SingleCutSampler

__all__ = ["CutSampler", "SingleCutSampler"]
