"""Throughput callback: counts the samples processed by all ranks in a window of batches."""
import time
from collections import deque

import torch
import torch.distributed as dist

from callback import RankZeroCallback


class SpeedMonitor(RankZeroCallback):
    def __init__(self, window_size: int = 100):
        self.window_size = window_size
        self.batch_times = deque(maxlen=window_size)
        self.batch_samples = deque(maxlen=window_size)
        self.start = None

    def batch_start(self, state, logger):
        self.start = time.time()

    def batch_end(self, state, logger):
        num_samples = torch.tensor([len(state.batch["input_ids"])], device=state.device)
        dist.all_reduce(num_samples)
        self.batch_samples.append(int(num_samples.item()))
        self.batch_times.append(time.time() - self.start)
        if len(self.batch_times) == self.window_size:
            logger.log_metrics({"throughput/samples_per_sec": sum(self.batch_samples) / sum(self.batch_times)})
