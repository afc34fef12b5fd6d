"""A score writer synchronises its file creation across the job when it is built distributed
(`synchronize = distributed and dist.is_initialized()`, then a barrier). Rank 0 alone saves the
final scores through a one-shot helper, which builds the writer with `distributed=False`: the
flag is False, so the `and` is too, and no barrier is issued on rank 0 alone."""
import numpy as np
import torch.distributed as dist


class ScoreWriter:
    def __init__(self, path, num_items, distributed=True):
        synchronize = distributed and dist.is_initialized()
        rank = dist.get_rank() if synchronize else 0
        if rank == 0:
            np.memmap(path, dtype=np.float32, mode="w+", shape=(num_items,)).flush()
        if synchronize:
            dist.barrier()
        self.scores = np.memmap(path, dtype=np.float32, mode="r+", shape=(num_items,))


def save_scores(path, scores):
    writer = ScoreWriter(path, len(scores), distributed=False)
    writer.scores[:] = scores
    writer.scores.flush()


def finish(path, scores):
    if dist.get_rank() == 0:
        save_scores(path, scores)
