"""Safe twin of nemo_nan_loss_skips_backward_on_one_rank.py: the summed loss is all-reduced with MAX
across workers before the NaN/inf test (PR #637), so either every worker raises
(`stop_on_nan_loss`) or every worker skips the same batch together.

Thread: https://github.com/NVIDIA-NeMo/Speech/pull/578 ("Initial fix for hanging bug when NaN/inf loss is encountered")
Project: NVIDIA-NeMo/Speech (then NVIDIA/NeMo), nemo/backends/pytorch/actions.py
Expected rankcheck finding: none.
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
                for value in losses.values():
                    final_loss += value
                # Check for NaN/inf loss across workers, so that all of them take the same branch.
                loss_nan_inf_checker = final_loss.detach().clone()
                if self.local_rank is not None:
                    dist.all_reduce(loss_nan_inf_checker, op=dist.ReduceOp.MAX)
                if torch.isnan(loss_nan_inf_checker).any() or torch.isinf(loss_nan_inf_checker).any():
                    if stop_on_nan_loss:
                        raise ValueError("Loss is NaN or inf on some worker - exiting")
                    logging.warning("Loss is NaN or inf on some worker, skipping step %d", self.step)
                    optimizer.zero_grad()
                    batch_counter = 0
                    continue
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
