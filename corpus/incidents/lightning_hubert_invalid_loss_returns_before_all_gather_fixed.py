"""Fixed twin of lightning_hubert_invalid_loss_returns_before_all_gather: the frame count and a
per-rank finiteness flag are gathered on every rank before the (now collective) skip decision.
"""
from typing import Tuple

import torch
from pytorch_lightning import LightningModule
from torch.optim.optimizer import Optimizer
from torchaudio.models import hubert_pretrain_base


class LinearDecayLRScheduler(torch.optim.lr_scheduler._LRScheduler):
    def __init__(self, optimizer: Optimizer, warmup_updates: int, max_updates: int, last_epoch: int = -1):
        self.warmup_updates = warmup_updates
        self.max_updates = max_updates
        super().__init__(optimizer, last_epoch=last_epoch)

    def get_lr(self):
        if self._step_count <= self.warmup_updates:
            return [self._step_count / self.warmup_updates * lr for lr in self.base_lrs]
        pct = (self.max_updates - self._step_count) / (self.max_updates - self.warmup_updates)
        return [max(pct, 0.0) * lr for lr in self.base_lrs]


class HuBERTPreTrainModule(LightningModule):
    def __init__(self, num_classes: int = 100, learning_rate: float = 5e-4, clip_norm: float = 10.0,
                 warmup_updates: int = 32_000, max_updates: int = 250_000):
        super().__init__()
        self.model = hubert_pretrain_base(num_classes=num_classes)
        self.loss_scaler = torch.cuda.amp.GradScaler()
        self.clip_norm = clip_norm
        self.learning_rate = learning_rate
        self.warmup_updates = warmup_updates
        self.max_updates = max_updates
        self.automatic_optimization = False

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.model.parameters(), lr=self.learning_rate, betas=(0.9, 0.98), eps=1e-6)
        sched = LinearDecayLRScheduler(opt, self.warmup_updates, self.max_updates)
        return [opt], [{"scheduler": sched, "interval": "step"}]

    def _step(self, batch, batch_idx, step_type: str) -> Tuple[torch.Tensor, torch.Tensor]:
        waveforms, labels, audio_lengths = batch
        logit_m, logit_u, feature_penalty = self.model(waveforms, labels, audio_lengths)
        loss_m = torch.nn.functional.cross_entropy(logit_m, labels[labels >= 0][: logit_m.size(0)], reduction="sum")
        loss = loss_m + 10.0 * feature_penalty * logit_m.size(0)
        num_frame = torch.tensor(logit_m.size(0), device=loss.device, dtype=torch.float)
        self.log(f"{step_type}_loss", loss.item() / max(num_frame.item(), 1.0), on_step=True, on_epoch=True)
        return loss, num_frame

    def training_step(self, batch, batch_idx):
        opt = self.optimizers()
        opt.zero_grad()
        with torch.cuda.amp.autocast(enabled=True):
            loss, num_frame = self._step(batch, batch_idx, "train")
        # every rank gathers its frame count and whether its loss is finite, then all skip together
        num_frames = self.all_gather(num_frame)
        finite = self.all_gather(torch.isfinite(loss.detach()).float())
        if finite.min() < 1:
            opt.zero_grad()
            return None
        self.log("gathered_num_frames", num_frames.float().sum(), on_step=True, on_epoch=True)
        loss = loss * num_frames.size(0) / num_frames.sum()
        self.manual_backward(self.loss_scaler.scale(loss))
        self.loss_scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip_norm)
        self.loss_scaler.step(opt)
        self.loss_scaler.update()
        self.lr_schedulers().step()
        return loss.detach()

    def validation_step(self, batch, batch_idx):
        loss, _ = self._step(batch, batch_idx, "val")
        return loss
