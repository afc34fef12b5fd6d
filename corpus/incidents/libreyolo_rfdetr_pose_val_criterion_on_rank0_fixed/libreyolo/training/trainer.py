"""Safe twin of libreyolo_rfdetr_pose_val_criterion_on_rank0/libreyolo/training/trainer.py: the base
trainer is unchanged (validation still runs on rank 0 while the other ranks wait in the barrier);
the fix of LibreYOLO#349 is in the pose override of `_run_validation`
(models/rfdetr/trainer.py), which no longer runs the collective criterion when distributed.

Thread: https://github.com/LibreYOLO/libreyolo/pull/349
"""
from __future__ import annotations

import logging
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import torch
import torch.nn as nn
from torch.amp import GradScaler, autocast
from tqdm import tqdm

from .distributed import (
    barrier,
    get_local_rank,
    get_rank,
    get_world_size,
    has_torchrun_env,
    init_distributed,
    is_distributed,
    is_main_process,
    scale_loss_for_ddp,
    unwrap_model,
)
from .ema import ModelEMA

logger = logging.getLogger(__name__)


class BaseTrainer:
    """Base trainer for all LibreYOLO model families."""

    best_metric_key: str = "metrics/mAP50-95"

    def __init__(self, model: nn.Module, wrapper_model: Optional[Any] = None, config: Optional[Any] = None):
        self.config = config
        self.model = model
        self.wrapper_model = wrapper_model

        # Distributed state: the process group is initialised eagerly under torchrun.
        if has_torchrun_env() and not is_distributed():
            init_distributed()
        self.rank = get_rank()
        self.local_rank = get_local_rank()
        self.world_size = get_world_size()
        self.is_distributed = is_distributed()

        self.device = torch.device(f"cuda:{self.local_rank}" if torch.cuda.is_available() else "cpu")

        self.start_epoch = 0
        self.current_epoch = 0
        self.current_iter = 0
        self.best_fitness = None
        self.final_loss = 0.0
        self.epoch_losses: List[float] = []
        self.patience_counter = 0

        self.optimizer = None
        self.lr_scheduler = None
        self.scaler = None
        self.ema_model = None
        self.train_loader = None
        self.val_loader = None
        self._is_setup = False

    # Hooks ---------------------------------------------------------------------------------

    def on_setup(self):
        """Family-specific setup (heads, criterion)."""

    def on_forward(self, imgs: torch.Tensor, targets: torch.Tensor, polygons=None) -> Dict:
        raise NotImplementedError

    def get_loss_components(self, outputs: Dict) -> Dict[str, float]:
        return {}

    def _setup_data(self):
        raise NotImplementedError

    def _setup_optimizer(self) -> torch.optim.Optimizer:
        return torch.optim.AdamW(unwrap_model(self.model).parameters(), lr=self.config.lr0, weight_decay=self.config.weight_decay)

    def create_scheduler(self, iters_per_epoch: int):
        raise NotImplementedError

    # Setup ---------------------------------------------------------------------------------

    def setup(self):
        if self._is_setup:
            return
        if is_main_process():
            logger.info("Setting up training...")
        self.model.to(self.device)
        if self.is_distributed and getattr(self.config, "sync_bn", False):
            self.model = nn.SyncBatchNorm.convert_sync_batchnorm(self.model)

        self.on_setup()
        self._setup_data()
        self.optimizer = self._setup_optimizer()
        self.lr_scheduler = self.create_scheduler(len(self.train_loader))

        # DDP wrap AFTER optimizer setup so _setup_optimizer sees the raw model.
        if self.is_distributed:
            ddp_kwargs = {
                "find_unused_parameters": self._ddp_find_unused_parameters(),
                "gradient_as_bucket_view": False,
            }
            if self.device.type == "cuda":
                ddp_kwargs["device_ids"] = [self.local_rank]
                ddp_kwargs["output_device"] = self.local_rank
            self.model = nn.parallel.DistributedDataParallel(self.model, **ddp_kwargs)

        self.scaler = GradScaler("cuda") if self.config.amp and self.device.type == "cuda" else None
        if self.config.ema:
            self.ema_model = ModelEMA(self.model, decay=self.config.ema_decay, tau=getattr(self.config, "ema_tau", 2000))

        # Save-dir creation lives on rank 0; the resolved name is broadcast to the other ranks.
        if is_main_process():
            self.save_dir = Path(self.config.project) / self.config.name
            self.save_dir.mkdir(parents=True, exist_ok=True)
        else:
            self.save_dir = Path(self.config.project) / self.config.name
        if self.is_distributed:
            import torch.distributed as _dist

            container = [str(self.save_dir)] if is_main_process() else [None]
            _dist.broadcast_object_list(container, src=0)
            self.save_dir = Path(container[0])

        # Wait for rank 0 to finish dir creation before any rank proceeds.
        barrier()
        self._is_setup = True

    def _ddp_find_unused_parameters(self) -> bool:
        return False

    # Training ------------------------------------------------------------------------------

    def train(self) -> Dict:
        start_time = time.time()
        self.setup()
        if is_main_process():
            logger.info(f"Starting training for {self.config.epochs} epochs")

        for epoch in range(self.start_epoch, self.config.epochs):
            self.current_epoch = epoch
            epoch_loss, val_metrics = self._train_epoch(epoch)
            self.final_loss = epoch_loss
            self.epoch_losses.append(epoch_loss)

            is_best = self._update_best_state(epoch, val_metrics)
            if (epoch + 1) % self.config.save_period == 0 or epoch == self.config.epochs - 1 or is_best:
                self._save_checkpoint(epoch, epoch_loss, val_metrics, is_best=is_best)

            # Early-stop decision lives on rank 0 only (patience_counter is updated from
            # val_metrics, which only rank 0 receives). The stop flag is broadcast so every rank
            # exits the loop in lockstep.
            should_stop = self.config.patience > 0 and self.patience_counter >= self.config.patience
            if self.is_distributed:
                import torch.distributed as _dist

                flag = torch.tensor(int(should_stop), dtype=torch.int, device=self.device)
                _dist.broadcast(flag, src=0)
                should_stop = bool(flag.item())
            if should_stop:
                if is_main_process():
                    logger.info(f"Early stopping triggered after {epoch + 1} epochs")
                break

        if is_main_process():
            logger.info(f"Training complete in {(time.time() - start_time) / 3600:.2f} hours")
        return {"final_loss": self.final_loss, "epoch_losses": list(self.epoch_losses)}

    def _train_epoch(self, epoch: int) -> Tuple[float, Optional[Dict[str, Any]]]:
        self.model.train()
        if is_distributed() and hasattr(self.train_loader, "sampler"):
            sampler = self.train_loader.sampler
            if hasattr(sampler, "set_epoch"):
                sampler.set_epoch(epoch)

        pbar = tqdm(
            self.train_loader,
            desc=f"Epoch {epoch + 1}/{self.config.epochs}",
            total=len(self.train_loader),
            disable=not sys.stderr.isatty() or not is_main_process(),
            file=sys.stderr,
        )
        total_loss = 0.0
        num_batches = 0
        for batch_idx, batch in enumerate(pbar):
            imgs, targets = batch[0], batch[1]
            self.current_iter = epoch * len(self.train_loader) + batch_idx
            imgs = imgs.to(self.device, non_blocking=True)
            targets = targets.to(self.device, non_blocking=True)

            if self.scaler is not None:
                with autocast("cuda"):
                    outputs = self.on_forward(imgs, targets)
                    total_loss_raw = outputs["total_loss"]
                loss = scale_loss_for_ddp(total_loss_raw)
                self.optimizer.zero_grad()
                self.scaler.scale(loss).backward()
                self.scaler.step(self.optimizer)
                self.scaler.update()
            else:
                outputs = self.on_forward(imgs, targets)
                total_loss_raw = outputs["total_loss"]
                loss = scale_loss_for_ddp(total_loss_raw)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()

            if self.ema_model is not None:
                self.ema_model.update(self.model)

            loss_val = float(total_loss_raw.item())
            total_loss += loss_val
            del outputs, loss
            lr = self.lr_scheduler.update_lr(self.current_iter + 1)
            for group in self.optimizer.param_groups:
                group["lr"] = lr
            num_batches += 1
            pbar.set_postfix({"loss": f"{loss_val:.4f}", "lr": f"{lr:.6f}"})

        avg_loss = total_loss / max(num_batches, 1)
        if is_main_process():
            logger.info(f"Epoch {epoch + 1} - Average loss: {avg_loss:.4f}")

        # Validation
        val_metrics = None
        if self._should_validate_epoch(epoch):
            val_metrics = self._validate_epoch(epoch)
        return avg_loss, val_metrics

    # Validation ----------------------------------------------------------------------------

    def _should_validate_epoch(self, epoch: int) -> bool:
        return self.config.eval_interval > 0 and (epoch + 1) % self.config.eval_interval == 0

    def _is_final_epoch(self, epoch: int) -> bool:
        return (epoch + 1) >= self.config.epochs

    def _validate_epoch(self, epoch: int, *, save_plots: Optional[bool] = None) -> Optional[Dict[str, Any]]:
        # First-cut policy: validation runs on rank 0 only. Non-zero ranks barrier-wait so the
        # next epoch's set_epoch fires in lockstep. Rank 0 barriers once at the bottom
        # regardless of outcome.
        if self.is_distributed and not is_main_process():
            barrier()
            return None
        try:
            return self._run_validation(epoch, save_plots=save_plots)
        finally:
            if self.is_distributed:
                barrier()

    def _run_validation(self, epoch: int, *, save_plots: Optional[bool] = None) -> Optional[Dict[str, Any]]:
        """Default: box mAP with the detection validator, on the unwrapped (or EMA) model."""
        from libreyolo.validation import DetectionValidator, ValidationConfig

        logger.info(f"Running validation for epoch {epoch + 1}")
        val_config = ValidationConfig(
            data=self.config.data,
            split="val",
            batch_size=self.config.batch,
            imgsz=self.config.imgsz,
            device=str(self.device),
        )
        eval_model = self.ema_model.ema if self.ema_model else unwrap_model(self.model)
        results = DetectionValidator(model=self.wrapper_model, config=val_config).run(model=eval_model)
        return {
            "best_metric": results.get("metrics/mAP50-95", 0.0),
            "best_metric_key": "metrics/mAP50-95",
            "metrics": results,
        }

    def _update_best_state(self, epoch: int, val_metrics: Optional[Dict[str, Any]]) -> bool:
        if not val_metrics:
            return False
        fitness = val_metrics.get("best_metric")
        if fitness is None:
            return False
        if self.best_fitness is None or fitness > self.best_fitness:
            self.best_fitness = fitness
            self.patience_counter = 0
            return True
        self.patience_counter += 1
        return False

    def _save_checkpoint(self, epoch: int, loss: float, val_metrics: Optional[Dict[str, Any]] = None, is_best: bool = False):
        # Only rank 0 writes checkpoint files. Other ranks skip silently.
        if not is_main_process():
            return
        raw_model = unwrap_model(self.model)
        model_to_save = self.ema_model.ema if self.ema_model else raw_model
        checkpoint = {
            "epoch": epoch,
            "model": model_to_save.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "loss": loss,
            "val_metrics": val_metrics,
        }
        weights_dir = self.save_dir / "weights"
        weights_dir.mkdir(parents=True, exist_ok=True)
        torch.save(checkpoint, weights_dir / "last.pt")
        if is_best:
            torch.save(checkpoint, weights_dir / "best.pt")
