"""Speculative-decoding draft-model training (DFlash) under DDP: a micro-batch whose samples are all
too short to form a block raises NoValidAnchorsError, and the loop skips it with `continue`.

Thread: https://github.com/NVIDIA-NeMo/Automodel/pull/2468 ("fix(speculative): keep DFlash DDP ranks in lockstep on no-valid-anchor skips")
Project: NVIDIA-NeMo/Automodel
What hung: "The training loop caught it with a per-rank `continue` (skip, no backward). Under DDP
this is per-rank and data-dependent. The DDP gradient all-reduce is triggered by `backward()`, so
if one rank skips its backward while another runs it, the NCCL collective mismatches (the others
wait on a reduce that never comes -> watchdog hang)".
Fix (the PR): "Each micro-batch min-reduces a per-rank `has_valid_anchor` flag via
`_all_ranks_have_valid`: if any rank has no valid anchors, all ranks skip that micro-batch
together".
Expected rankcheck finding: RC103 on the `continue` taken on per-rank data before the DDP backward.
"""
import contextlib

import torch
import torch.distributed as dist


class NoValidAnchorsError(RuntimeError):
    pass


class DFlashTrainer:
    def __init__(self, draft_model, target_model, block_size: int):
        self.draft_model = draft_model
        self.target_model = target_model
        self.block_size = block_size

    def select_anchors(self, input_ids, loss_mask):
        lengths = loss_mask.sum(-1)
        valid = lengths >= self.block_size
        if not valid.any():
            raise NoValidAnchorsError(f"no sample of length >= {self.block_size} in this micro-batch")
        return valid

    def compute_loss(self, batch):
        anchors = self.select_anchors(batch["input_ids"], batch["loss_mask"])
        with torch.no_grad():
            target_hidden = self.target_model(batch["input_ids"][anchors], output_hidden_states=True).hidden_states[-1]
        logits = self.draft_model(batch["input_ids"][anchors], target_hidden)
        return torch.nn.functional.cross_entropy(logits.flatten(0, 1), batch["labels"][anchors].flatten(), ignore_index=-100)


def train(trainer: DFlashTrainer, model, optimizer, loader, grad_accum: int):
    step = 0
    for micro_step, batch in enumerate(loader):
        is_boundary = (micro_step + 1) % grad_accum == 0
        sync_ctx = contextlib.nullcontext() if is_boundary else model.no_sync()
        try:
            loss = trainer.compute_loss(batch)
        except NoValidAnchorsError:
            continue  # expect: RC103
        with sync_ctx:
            (loss / grad_accum).backward()
        if is_boundary:
            optimizer.step()
            optimizer.zero_grad()
            step += 1
    return step
