"""Training loop of NeMo's early PyTorch backend (NeuralModuleFactory / PtActions.train, 2020) for an
ASR model (Jasper/QuartzNet) under DDP with `batches_per_step` gradient accumulation: when a loss
comes out NaN or inf on a batch, the rank zeroes its gradients and skips that batch's backward.

Thread: https://github.com/NVIDIA-NeMo/Speech/pull/578 ("Initial fix for hanging bug when NaN/inf loss is encountered")
Project: NVIDIA-NeMo/Speech (then NVIDIA/NeMo), nemo/backends/pytorch/actions.py
What hung: the symptom in #532 ("--iter_per_step eventually hangs with 8x V100 16GB": all GPUs at
100% at idle power, "it will hang in the middle of training"); the PR removes the per-rank skip with
"Set flag here and terminate at next eval step (to avoid desync and hanging)": the rank that saw the
NaN skips its DDP backward while the other ranks wait in the gradient all-reduce.
Fix (redoctopus, follow-up PR #637 "Better NaN/inf loss handling for O0 (skip step across workers)",
merged): "`actions.py` now syncs across workers to check for NaN/inf loss. Terminates all workers if
`stop_on_nan_loss` is set ... and skips the step across workers otherwise" (all_reduce with MAX of
the loss before the decision).
Expected rankcheck finding: RC103 on the `continue` that skips the backward on this rank's own NaN loss.
"""
import logging
from contextlib import nullcontext

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class PtActions:
    def __init__(self, local_rank=None):
        self.local_rank = local_rank
        self.step = 0

    def _forward_losses(self, model, loss_modules, data):
        audio, audio_len, transcript, transcript_len = (t.cuda() for t in data)
        log_probs, encoded_len = model(input_signal=audio, length=audio_len)
        return {
            name: loss_fn(log_probs=log_probs, targets=transcript, input_length=encoded_len, target_length=transcript_len)
            for name, loss_fn in loss_modules.items()
        }

    def train(self, model, loss_modules, train_dataloader, optimizer, num_epochs, batches_per_step=1, stop_on_nan_loss=False):
        if self.local_rank is not None:
            model = DDP(model.cuda(), device_ids=[self.local_rank], find_unused_parameters=True)
        model.train()
        for epoch in range(num_epochs):
            if self.local_rank is not None:
                train_dataloader.sampler.set_epoch(epoch)
            batch_counter = 0
            for data in train_dataloader:
                disable_allreduce = batch_counter < (batches_per_step - 1)
                losses = self._forward_losses(model, loss_modules, data)
                final_loss = 0
                nan = False
                for name, value in losses.items():
                    if torch.isnan(value).any() or torch.isinf(value).any():
                        if stop_on_nan_loss:
                            raise ValueError("Loss is NaN or inf - exiting")
                        logging.warning("Loss is NaN or inf")
                        optimizer.zero_grad()
                        nan = True
                        break
                    final_loss += value
                if nan:
                    continue  # expect: RC103
                sync_ctx = model.no_sync() if (disable_allreduce and self.local_rank is not None) else nullcontext()
                with sync_ctx:
                    (final_loss / batches_per_step).backward()
                batch_counter += 1
                if batch_counter == batches_per_step:
                    optimizer.step()
                    optimizer.zero_grad()
                    batch_counter = 0
                    self.step += 1
                    if self.step % 100 == 0 and (self.local_rank is None or dist.get_rank() == 0):
                        logging.info("step %d loss %.4f", self.step, float(final_loss))
