"""Safe twin of fairseq_oom_recovery_in_train_step.py: with more than one worker an OOM is
re-raised, so the job ends instead of a worker silently dropping out of the gradient all-reduces.

Thread: https://github.com/facebookresearch/fairseq/pull/3989
"""
import contextlib
import logging

import torch

logger = logging.getLogger(__name__)


class Trainer:
    def __init__(self, cfg, task, model, criterion, optimizer):
        self.cfg = cfg
        self.task = task
        self.model = model
        self.criterion = criterion
        self.optimizer = optimizer
        self.data_parallel_world_size = cfg.distributed_training.distributed_world_size
        self._num_updates = 0

    def zero_grad(self):
        self.optimizer.zero_grad()

    def train_step(self, samples, raise_oom=False):
        self.model.train()
        self.criterion.train()
        self.zero_grad()
        logging_outputs, sample_size, ooms = [], 0, 0
        for i, sample in enumerate(samples):
            is_last = i == len(samples) - 1
            maybe_no_sync = self.model.no_sync if self.data_parallel_world_size > 1 and not is_last else contextlib.nullcontext
            try:
                with maybe_no_sync():
                    loss, sample_size_i, logging_output = self.task.train_step(
                        sample=sample, model=self.model, criterion=self.criterion, optimizer=self.optimizer, update_num=self._num_updates
                    )
                    del loss
                logging_outputs.append(logging_output)
                sample_size += sample_size_i
            except RuntimeError as e:
                if "out of memory" in str(e):
                    if raise_oom or self.data_parallel_world_size > 1:
                        raise e
                    logger.warning("attempting to recover from OOM in forward/backward pass")
                    ooms += 1
                    self.zero_grad()
                    torch.cuda.empty_cache()
                    return None
                else:
                    raise e
        self.optimizer.step()
        self._num_updates += 1
        return logging_outputs, sample_size, ooms
