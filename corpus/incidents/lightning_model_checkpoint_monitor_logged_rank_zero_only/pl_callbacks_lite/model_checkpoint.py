# Copyright The Lightning AI team.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Trimmed for the incident corpus: the monitored top-k saving path of ModelCheckpoint as it stood
# in Lightning 2.1 (no last.ckpt, no train-time interval, no every_n_epochs bookkeeping).

import logging
import os
import re
from typing import Dict, Optional

import torch
from lightning.fabric.utilities.cloud_io import get_filesystem
from lightning.pytorch.callbacks import Checkpoint

log = logging.getLogger(__name__)


class ModelCheckpoint(Checkpoint):
    CHECKPOINT_JOIN_CHAR = "-"
    CHECKPOINT_EQUALS_CHAR = "="
    FILE_EXTENSION = ".ckpt"
    STARTING_VERSION = 1

    def __init__(
        self,
        dirpath: Optional[str] = None,
        filename: Optional[str] = None,
        monitor: Optional[str] = None,
        save_top_k: int = 1,
        mode: str = "min",
        auto_insert_metric_name: bool = True,
        enable_version_counter: bool = True,
    ):
        super().__init__()
        self.dirpath = os.path.realpath(dirpath) if dirpath else None
        self._fs = get_filesystem(self.dirpath or "")
        self.filename = filename
        self.monitor = monitor
        self.save_top_k = save_top_k
        self.mode = mode
        self.auto_insert_metric_name = auto_insert_metric_name
        self._enable_version_counter = enable_version_counter
        self.best_k_models: Dict[str, torch.Tensor] = {}
        self.kth_best_model_path = ""
        self.best_model_score: Optional[torch.Tensor] = None
        self.best_model_path = ""
        self.kth_value = torch.tensor(float("inf") if mode == "min" else -float("inf"))

    def setup(self, trainer, pl_module, stage: str) -> None:
        if self.dirpath is None:
            self.dirpath = os.path.join(trainer.log_dir or trainer.default_root_dir, "checkpoints")
        self.dirpath = trainer.strategy.broadcast(self.dirpath)

    def on_validation_end(self, trainer, pl_module) -> None:
        if trainer.sanity_checking or trainer.fast_dev_run:
            return
        monitor_candidates = self._monitor_candidates(trainer)
        self._save_topk_checkpoint(trainer, monitor_candidates)

    def _monitor_candidates(self, trainer) -> Dict[str, torch.Tensor]:
        candidates = dict(trainer.callback_metrics)
        candidates.setdefault("epoch", torch.tensor(trainer.current_epoch))
        candidates.setdefault("step", torch.tensor(trainer.global_step))
        return candidates

    def _save_topk_checkpoint(self, trainer, monitor_candidates: Dict[str, torch.Tensor]) -> None:
        if self.save_top_k == 0:
            return
        if monitor_candidates.get(self.monitor) is None:
            raise RuntimeError(f"ModelCheckpoint(monitor={self.monitor!r}) could not find the monitored key")
        self._save_monitor_checkpoint(trainer, monitor_candidates)

    def _save_monitor_checkpoint(self, trainer, monitor_candidates: Dict[str, torch.Tensor]) -> None:
        current = monitor_candidates.get(self.monitor)
        if self.check_monitor_top_k(trainer, current):
            self._update_best_and_save(current, trainer, monitor_candidates)

    def check_monitor_top_k(self, trainer, current: Optional[torch.Tensor] = None) -> bool:
        if current is None:
            return False
        if self.save_top_k == -1 or len(self.best_k_models) < self.save_top_k:
            return True
        monitor_op = {"min": torch.lt, "max": torch.gt}[self.mode]
        should_update_best_and_save = monitor_op(current, self.best_k_models[self.kth_best_model_path])
        # every process has to agree on the decision
        return trainer.strategy.reduce_boolean_decision(bool(should_update_best_and_save))

    def _update_best_and_save(self, current: torch.Tensor, trainer, monitor_candidates: Dict[str, torch.Tensor]):
        k = len(self.best_k_models) + 1 if self.save_top_k == -1 else self.save_top_k

        del_filepath = None
        if len(self.best_k_models) == k and k > 0:
            del_filepath = self.kth_best_model_path
            self.best_k_models.pop(del_filepath)

        if isinstance(current, torch.Tensor) and torch.isnan(current):
            current = torch.tensor(float("inf" if self.mode == "min" else "-inf"), device=current.device)

        filepath = self._get_metric_interpolated_filepath_name(monitor_candidates, trainer, del_filepath)

        self.best_k_models[filepath] = current
        if len(self.best_k_models) == k:
            pick = min if self.mode == "max" else max
            self.kth_best_model_path = pick(self.best_k_models, key=self.best_k_models.get)
            self.kth_value = self.best_k_models[self.kth_best_model_path]
        pick = min if self.mode == "min" else max
        self.best_model_path = pick(self.best_k_models, key=self.best_k_models.get)
        self.best_model_score = self.best_k_models[self.best_model_path]

        log.info(f"Epoch {trainer.current_epoch}: {self.monitor!r} reached {current:.5f}; saving to {filepath!r}")
        self._save_checkpoint(trainer, filepath)
        if del_filepath is not None and filepath != del_filepath:
            self._remove_checkpoint(trainer, del_filepath)

    def _format_checkpoint_name(self, metrics: Dict[str, torch.Tensor], ver: Optional[int] = None) -> str:
        filename = self.filename or "{epoch}-{step}"
        for group in re.findall(r"(\{.*?)[:\}]", filename):
            name = group[1:]
            if self.auto_insert_metric_name:
                filename = filename.replace(group, name + self.CHECKPOINT_EQUALS_CHAR + "{" + name)
            metrics.setdefault(name, torch.tensor(0))
        filename = filename.format(**{k: (v.item() if isinstance(v, torch.Tensor) else v) for k, v in metrics.items()})
        if ver is not None:
            filename = self.CHECKPOINT_JOIN_CHAR.join((filename, f"v{ver}"))
        return os.path.join(self.dirpath, filename + self.FILE_EXTENSION)

    def _get_metric_interpolated_filepath_name(self, monitor_candidates, trainer, del_filepath: Optional[str] = None):
        filepath = self._format_checkpoint_name(dict(monitor_candidates))
        if self._enable_version_counter:
            version_cnt = self.STARTING_VERSION
            while self.file_exists(filepath, trainer) and filepath != del_filepath:  # expect: RC103
                filepath = self._format_checkpoint_name(dict(monitor_candidates), ver=version_cnt)
                version_cnt += 1
        return filepath

    def file_exists(self, filepath: str, trainer) -> bool:
        # every process checks the shared file system and takes rank 0's answer
        exists = self._fs.exists(filepath)
        return trainer.strategy.broadcast(exists)

    def _save_checkpoint(self, trainer, filepath: str) -> None:
        trainer.save_checkpoint(filepath)

    def _remove_checkpoint(self, trainer, filepath: str) -> None:
        if trainer.is_global_zero and self._fs.exists(filepath):
            self._fs.rm(filepath)
