"""Safe twin of ddp_skip_backward_on_no_valid_anchor.py: every rank min-reduces a "has valid
anchors" flag, and the micro-batch is skipped on all ranks together when any rank has none.

Thread: https://github.com/NVIDIA-NeMo/Automodel/pull/2468
"""
import contextlib

import torch
import torch.distributed as dist


class NoValidAnchorsError(RuntimeError):
    pass


def _all_ranks_have_valid(has_valid: bool, device) -> bool:
    flag = torch.tensor([1 if has_valid else 0], device=device)
    if dist.is_initialized():
        dist.all_reduce(flag, op=dist.ReduceOp.MIN)
    return bool(flag.item())


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
        loss = None
        try:
            loss = trainer.compute_loss(batch)
        except NoValidAnchorsError:
            pass
        if not _all_ranks_have_valid(loss is not None, batch["input_ids"].device):
            continue
        with sync_ctx:
            (loss / grad_accum).backward()
        if is_boundary:
            optimizer.step()
            optimizer.zero_grad()
            step += 1
    return step
