"""Composer-style trainer with automatic microbatching (`device_train_microbatch_size="auto"`): a
batch whose forward or backward runs out of CUDA memory is caught, the microbatch size is halved
and the batch is retried; the ranks then agree (an all-reduce MAX of an OOM flag) whether any of
them had to retry.

Thread: https://github.com/mosaicml/composer/pull/2117 ("Auto Microbatching -- The Final Form")
Project: mosaicml/composer
What hung: "Currently, if only a subset of ranks OOM when using auto microbatching, we will
encounter a deadlock." The rank that ran out of memory in its forward left the microbatch loop
through the `except`, and went on to the all-reduce of `found_cuda_oom`; the other ranks were
still in the same microbatches' backward, whose DDP gradient all-reduces that rank never issued
(the earlier attempt, composer#1319, says it the same way: "some ranks start to retry the batch,
while others are stuck in the gradient reduce after backprop").
Fix (the PR, merged): "We now do a check after the forward to see if any other ranks OOMed" --
every rank all-reduces an OOM flag right after each forward, before any backward, and all of them
raise and retry together; multi-sync of the DDP buckets is forced. (FSDP gets the check after each
block; the twin keeps the DDP path.)
Expected rankcheck finding: RC105 on the `except RuntimeError` that swallows an OOM raised on some
ranks around the microbatches' forward/backward collectives.
(Trimmed to the training step: events, loggers, closures, multiple optimizers and evaluation are
left out.)
"""
import contextlib
import logging
from typing import Any, Dict, List

import torch
from torch.nn.parallel import DistributedDataParallel

from composer.utils import dist

log = logging.getLogger(__name__)


def _is_cuda_oom(e: RuntimeError) -> bool:
    """Determines if the error is a CUDA out of memory error."""
    if "CUDA out of memory" in str(e):
        return True
    if "CUDA error: out of memory" in str(e):
        return True
    return False


def _adjust_device_train_microbatch_size(state) -> None:
    """Halve the device microbatch size after an OOM and release the cached blocks."""
    if state.device_train_microbatch_size == 1:
        raise RuntimeError("CUDA out of memory. The train loop failed with an internal microbatch of size 1.")
    original = state.device_train_microbatch_size
    state.device_train_microbatch_size = max(original // 2, 1)
    log.info(f"CUDA OOM: device_train_microbatch_size {original} -> {state.device_train_microbatch_size}")
    for optimizer in state.optimizers:
        optimizer.zero_grad(set_to_none=True)
    torch.cuda.empty_cache()


def _prepare_ddp_module(module: torch.nn.Module, find_unused_parameters: bool) -> torch.nn.Module:
    if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        return DistributedDataParallel(module, find_unused_parameters=find_unused_parameters)
    return module


class Trainer:
    def __init__(self, state, train_dataloader, find_unused_parameters: bool = False):
        self.state = state
        self.state.model = _prepare_ddp_module(self.state.model, find_unused_parameters)
        self.train_dataloader = train_dataloader

    def _split_batch(self, batch: Dict[str, torch.Tensor], microbatch_size: int) -> List[Dict[str, torch.Tensor]]:
        num = next(iter(batch.values())).shape[0]
        return [{k: v[i:i + microbatch_size] for k, v in batch.items()} for i in range(0, num, microbatch_size)]

    def _train_microbatch(self, microbatch: Dict[str, Any], current_batch_size: int, is_final_microbatch: bool) -> torch.Tensor:
        model = self.state.model
        microbatch_num_samples = next(iter(microbatch.values())).shape[0]
        # Only the last microbatch's backward all-reduces the accumulated gradients.
        if isinstance(model, DistributedDataParallel) and not is_final_microbatch:
            sync_context = model.no_sync()
        else:
            sync_context = contextlib.nullcontext()
        with sync_context:
            outputs = model(microbatch)
            loss = self.state.loss_fn(outputs, microbatch)
            loss = loss * (microbatch_num_samples / current_batch_size)
            loss.backward()
        return loss.detach()

    def _train_microbatches(self, microbatches: List[Dict[str, Any]], total_loss: torch.Tensor) -> None:
        current_batch_size = sum(next(iter(mb.values())).shape[0] for mb in microbatches)
        for optimizer in self.state.optimizers:
            optimizer.zero_grad()
        for microbatch_idx, microbatch in enumerate(microbatches):
            is_final_microbatch = microbatch_idx + 1 == len(microbatches)
            total_loss += self._train_microbatch(microbatch, current_batch_size, is_final_microbatch)

    def _train_batch(self, device_batch: Dict[str, torch.Tensor]) -> torch.Tensor:
        # Retry until the batch trains without running out of memory on any rank.
        while True:
            total_loss = torch.zeros(1, device="cuda")
            found_cuda_oom = 0  # an int: a boolean OR is not supported by every backend
            try:
                microbatches = self._split_batch(device_batch, self.state.device_train_microbatch_size)
                self._train_microbatches(microbatches, total_loss)
                for optimizer in self.state.optimizers:
                    optimizer.step()
            except RuntimeError as e:  # expect: RC105
                if self.state.auto_microbatching and _is_cuda_oom(e):
                    log.debug(f"Rank {dist.get_global_rank()} OOM'd.")
                    found_cuda_oom = 1
                else:
                    raise

            if self.state.auto_microbatching:
                # Propagate across all ranks if any rank hit CUDA OOM.
                found = torch.tensor([found_cuda_oom], dtype=torch.uint8, device="cuda")
                dist.all_reduce(found, reduce_operation="MAX")
                if found.item() == 1:
                    _adjust_device_train_microbatch_size(self.state)
                    # Skip the return and rerun the batch with the smaller microbatch size.
                    continue
            return total_loss

    def fit(self, duration_in_batches: int) -> None:
        self.state.model.train()
        batches_seen = 0
        while batches_seen < duration_in_batches:
            for batch in self.train_dataloader:
                device_batch = {k: v.cuda(non_blocking=True) for k, v in batch.items()}
                loss = self._train_batch(device_batch)
                batches_seen += 1
                if dist.get_global_rank() == 0 and batches_seen % 50 == 0:
                    log.info(f"batch {batches_seen}: loss {loss.item():.4f}, microbatch {self.state.device_train_microbatch_size}")
                if batches_seen >= duration_in_batches:
                    break
