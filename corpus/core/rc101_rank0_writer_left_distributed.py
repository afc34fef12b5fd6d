"""The look-alike: the one-shot helper builds the writer with the default, `distributed=True`,
so on rank 0 alone it waits in the creation barrier the other ranks never reach."""
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
    writer = ScoreWriter(path, len(scores))
    writer.scores[:] = scores
    writer.scores.flush()


def finish(path, scores):
    if dist.get_rank() == 0:
        save_scores(path, scores)  # expect: RC101
