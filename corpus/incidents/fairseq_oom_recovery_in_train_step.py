"""fairseq-style Trainer.train_step with out-of-memory recovery: a forward/backward that runs out of
memory is caught, the gradients are zeroed and training goes on with the next sample.

Thread: https://github.com/facebookresearch/fairseq/pull/3989 ("Fixes OOM bug causing distributed training jobs to hang.")
Project: facebookresearch/fairseq
What hung: "When one of the workers gets a OOM error, it tries to recover with a `try ... except`
statement, but the other workers keep waiting for it, and they get out of sync." The backward of
the DDP-wrapped model all-reduces the gradients; the worker that ran out of memory abandoned its
backward (and its share of those all-reduces) and went on to the next collective.
Fix (the PR): in a distributed run, re-raise the OOM instead of recovering -- "I'd rather my jobs
terminate than enter an infinite loop."
Expected rankcheck finding: RC105 on the `except RuntimeError` that swallows a per-rank OOM around
the forward/backward collectives.
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
            except RuntimeError as e:  # expect: RC105
                if "out of memory" in str(e):
                    if raise_oom:
                        raise e
                    logger.warning("attempting to recover from OOM in forward/backward pass")
                    ooms += 1
                    self.zero_grad()
                    torch.cuda.empty_cache()
                    if self.data_parallel_world_size == 1:
                        return None
                else:
                    raise e
        self.optimizer.step()
        self._num_updates += 1
        return logging_outputs, sample_size, ooms
