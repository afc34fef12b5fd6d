"""Trimmed fairseq/trainer.py (2019): `train_step` runs forward/backward on each chunk of the
update (DDP all-reduces the gradients in the last backward, the others under `no_sync`), replaces
an empty chunk by the dummy batch with its gradients ignored, then gathers the logging outputs of
all workers with `all_gather_list` before the optimizer step."""
import contextlib
import math
import sys
from itertools import chain

import torch

from fairseq_lite import distributed_utils


class Trainer:
    def __init__(self, args, task, model, criterion, optimizer):
        self.args = args
        self.task = task
        self.criterion = criterion
        self._model = model
        self.optimizer = optimizer
        self._dummy_batch = None
        self._num_updates = 0
        self._prev_grad_norm = None
        self._wrapped_model = None

    @property
    def model(self):
        if self._wrapped_model is None:
            if self.args.distributed_world_size > 1:
                self._wrapped_model = torch.nn.parallel.DistributedDataParallel(
                    self._model, device_ids=[self.args.device_id], output_device=self.args.device_id,
                    broadcast_buffers=False, bucket_cap_mb=self.args.bucket_cap_mb,
                )
            else:
                self._wrapped_model = self._model
        return self._wrapped_model

    def get_num_updates(self):
        return self._num_updates

    def _prepare_sample(self, sample):
        if sample is None or len(sample) == 0:
            return None
        return {k: (v.cuda() if torch.is_tensor(v) else v) for k, v in sample.items()}

    def train_step(self, samples, dummy_batch=False):
        """Do forward, backward and parameter update."""
        if self._dummy_batch is None:
            self._dummy_batch = samples[0]
        self.model.train()
        self.optimizer.zero_grad()

        logging_outputs, sample_sizes, ooms = [], [], 0
        for i, sample in enumerate(samples):
            sample = self._prepare_sample(sample)
            if sample is None:
                # run forward/backward on a dummy batch and ignore its gradients
                sample = self._prepare_sample(self._dummy_batch)
                ignore_grad = True
            else:
                ignore_grad = False

            def maybe_no_sync():
                if self.args.distributed_world_size > 1 and i < len(samples) - 1:
                    return self.model.no_sync()
                return contextlib.ExitStack()

            try:
                with maybe_no_sync():
                    loss, sample_size, logging_output = self.task.train_step(
                        sample, self.model, self.criterion, self.optimizer, ignore_grad)
                if not ignore_grad:
                    logging_outputs.append(logging_output)
                    sample_sizes.append(sample_size)
            except RuntimeError as e:
                if "out of memory" in str(e):
                    print("| WARNING: ran out of memory, skipping batch", file=sys.stderr)
                    ooms += 1
                    self.optimizer.zero_grad()
                else:
                    raise e

        if dummy_batch:
            return None

        # gather logging outputs from all replicas
        if self.args.distributed_world_size > 1:
            logging_outputs, sample_sizes, ooms, prev_norms = zip(*distributed_utils.all_gather_list(
                [logging_outputs, sample_sizes, ooms, self._prev_grad_norm]))
            logging_outputs = list(chain.from_iterable(logging_outputs))
            sample_sizes = list(chain.from_iterable(sample_sizes))
            ooms = sum(ooms)
            assert all(norm == prev_norms[0] for norm in prev_norms) or all(
                norm is None or math.isnan(norm) or math.isinf(norm) for norm in prev_norms
            ), "Fatal error: gradients are inconsistent between workers"

        if ooms == self.args.distributed_world_size * len(samples):
            print("| WARNING: OOM in all workers, skipping update")
            self.optimizer.zero_grad()
            return None

        logging_output = self.task.aggregate_logging_outputs(logging_outputs, self.criterion)
        sample_size = self.task.grad_denom(sample_sizes, self.criterion)
        if sample_size > 0:
            self.optimizer.multiply_grads(self.args.distributed_world_size / float(sample_size))
        grad_norm = self.optimizer.clip_grad_norm(self.args.clip_norm)
        self._prev_grad_norm = float(grad_norm)
        self.optimizer.step()
        self._num_updates += 1
        return logging_output
