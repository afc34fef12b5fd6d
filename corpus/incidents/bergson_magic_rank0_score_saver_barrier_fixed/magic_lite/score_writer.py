"""Memory-mapped score stores: one row per training document (or per token), one column per query.

The writers are built collectively during distributed scoring: rank 0 creates ``scores.bin`` and
the metadata, every rank waits at a barrier, then every rank opens the file and writes its rows.
The one-shot helpers are called from a single process and build them with ``distributed=False``.
"""
import json
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist


def _score_struct_dtype(num_scores: int, np_dtype: np.dtype):
    names, formats, offsets = [], [], []
    pair = 1 << (np_dtype.itemsize + 1 - 1).bit_length()
    for i in range(num_scores):
        names += [f"score_{i}", f"written_{i}"]
        formats += [np_dtype, "bool"]
        offsets += [i * pair, i * pair + np_dtype.itemsize]
    itemsize = ((num_scores * pair + 7) // 8) * 8
    spec = {"names": names, "formats": formats, "offsets": offsets, "itemsize": itemsize}
    json_spec = dict(spec, formats=[str(f) for f in formats])
    return spec, json_spec


class MemmapSequenceScoreWriter:
    def __init__(self, path: Path, num_items: int, num_scores: int, *, dtype=torch.float32, flush_interval=64, overwrite=False,
                 distributed: bool = True):
        self.path = Path(path)
        self.dtype = dtype
        self.flush_interval = flush_interval
        self.num_batches_since_flush = 0
        self.path.mkdir(parents=True, exist_ok=True)
        scores_file = self.path / "scores.bin"
        np_dtype = np.dtype(torch.empty((), dtype=dtype).numpy().dtype)
        spec, json_spec = _score_struct_dtype(num_scores, np_dtype)

        synchronize = distributed and dist.is_initialized()
        rank = dist.get_rank() if synchronize else 0
        if rank == 0 and (overwrite or not scores_file.exists()):
            print(f"Creating new scores file: {scores_file}")
            np.memmap(str(scores_file), dtype=np.dtype(spec), mode="w+", shape=(num_items,)).flush()
            with (self.path / "info.json").open("w") as f:
                json.dump({"attribute_tokens": False, "num_items": num_items, "num_scores": num_scores, "dtype": json_spec}, f, indent=2)

        if synchronize:
            dist.barrier()

        self.scores = np.memmap(str(scores_file), dtype=np.dtype(spec), mode="r+", shape=(num_items,))

    def __call__(self, indices, scores: torch.Tensor, query_offset: int = 0):
        scores = scores.to(dtype=self.dtype)
        for i in range(scores.shape[1]):
            self.scores[f"score_{query_offset + i}"][indices] = scores[:, i].cpu().numpy()
            self.scores[f"written_{query_offset + i}"][indices] = True
        self.num_batches_since_flush += 1
        if self.num_batches_since_flush >= self.flush_interval:
            self.flush()

    def flush(self):
        self.scores.flush()
        self.num_batches_since_flush = 0


class MemmapTokenScoreWriter(MemmapSequenceScoreWriter):
    """Same store with one row per token; ``offsets`` maps documents to their token rows."""

    def __init__(self, path: Path, num_token_grads: np.ndarray, num_scores: int, *, dtype=torch.float32, overwrite=False,
                 distributed: bool = True):
        offsets = np.zeros(len(num_token_grads) + 1, dtype=np.int64)
        np.cumsum(num_token_grads, out=offsets[1:])
        rank = dist.get_rank() if distributed and dist.is_initialized() else 0
        Path(path).mkdir(parents=True, exist_ok=True)
        if rank == 0:
            np.save(Path(path) / "offsets.npy", offsets)
        super().__init__(path, int(offsets[-1]), num_scores, dtype=dtype, overwrite=overwrite, distributed=distributed)
        self.offsets = offsets


def save_sequence_scores(path: Path, scores: np.ndarray, *, dtype=torch.float32) -> None:
    """One-shot equivalent of MemmapSequenceScoreWriter for callers that hold the whole matrix."""
    if scores.ndim == 1:
        scores = scores[:, None]
    num_items, num_scores = scores.shape
    writer = MemmapSequenceScoreWriter(path, num_items, num_scores, dtype=dtype, overwrite=True, distributed=False)
    writer(list(range(num_items)), torch.from_numpy(np.ascontiguousarray(scores)))
    writer.flush()


def save_token_scores(path: Path, values: np.ndarray, offsets: np.ndarray, *, dtype=torch.float32) -> None:
    if values.ndim == 1:
        values = values[:, None]
    num_token_grads = np.diff(offsets).astype(np.int64)
    writer = MemmapTokenScoreWriter(path, num_token_grads, values.shape[1], dtype=dtype, overwrite=True, distributed=False)
    writer(list(range(values.shape[0])), torch.from_numpy(np.ascontiguousarray(values)))
    writer.flush()
