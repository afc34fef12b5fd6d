"""Main engine of the PyTorch backend (returnn/torch/engine.py, before rwth-i6/returnn#1461): trains
one (sub)epoch at a time over the train DataLoader, then saves the model and evaluates on the dev
and eval datasets -- the evaluation on rank 0 only, "for simplicity"."""
from __future__ import annotations

import os
import time
from contextlib import nullcontext
from typing import Callable, Dict, Optional

import torch
import torch.distributed
from torch import autocast
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader

from returnn_lite.datasets import Dataset
from returnn_lite.torch import distributed as returnn_distributed
from returnn_lite.torch.data import pipeline as data_pipeline
from returnn_lite.torch.data import returnn_dataset_wrapper


def _print_process(report_prefix: str, step: int, eval_info: Dict[str, float]):
    info = ", ".join(f"{k} {v:.3f}" for k, v in eval_info.items())
    print(f"{report_prefix}, step {step}, {info}", flush=True)


class Engine:
    def __init__(self, config: dict):
        self.config = config
        self.model_filename = config.get("model")
        self._device = "cuda" if torch.cuda.is_available() else "cpu"
        self._use_torch_distributed = False
        self._torch_distributed_options = {}
        torch_distributed = config.get("torch_distributed")
        if torch_distributed is not None:
            self._use_torch_distributed = True
            self._torch_distributed_options = torch_distributed.get("options", {})
            ctx = returnn_distributed.get_ctx(config)
            local_rank = ctx.local_rank()
            print(f"Start running torch distributed training on local rank {local_rank}.")
            self._device = f"cuda:{local_rank}"
            torch.cuda.set_device(local_rank)

        self._epoch_mp_shared = torch.multiprocessing.Value("i", 0)
        self._use_autocast = config.get("torch_amp") is not None
        self._autocast_dtype = getattr(torch, config["torch_amp"]) if self._use_autocast else None

        self.train_dataset: Optional[Dataset] = None
        self.eval_datasets: Dict[str, Dataset] = {}
        self._train_dataloader: Optional[DataLoader] = None
        self._eval_dataloaders: Dict[str, DataLoader] = {}
        self._orig_model: Optional[torch.nn.Module] = None
        self._pt_model: Optional[torch.nn.Module] = None
        self._ddp_pt_model: Optional[DistributedDataParallel] = None
        self._train_step_func: Optional[Callable] = None
        self.epoch = 0
        self.global_train_step = 0
        self.learning_rate = config.get("learning_rate", 1e-3)
        self.epoch_errors: Dict[int, Dict[str, float]] = {}

    # ---------------------------------------------------------------- setup

    def init_train_from_config(self, train_data: Dataset, dev_data: Optional[Dataset] = None,
                               eval_data: Optional[Dataset] = None):
        self.train_dataset = train_data
        self.eval_datasets.clear()
        if dev_data:
            self.eval_datasets["dev"] = dev_data
        if eval_data:
            self.eval_datasets["eval"] = eval_data

        self._train_dataloader = self._create_data_loader(train_data)
        for dataset_name, dataset in self.eval_datasets.items():
            self._eval_dataloaders[dataset_name] = self._create_data_loader(dataset)

        self._start_epoch = self.config.get("start_epoch", 1)
        self._final_epoch = self.config["num_epochs"]
        self._save_model_epoch_interval = self.config.get("save_interval", 1)

        self._orig_model = self.config["get_model"](epoch=self._start_epoch, step=0)
        self._pt_model = self._orig_model.to(self._device)
        if self._use_torch_distributed:
            # wrap the model with the torch distributed class
            self._ddp_pt_model = DistributedDataParallel(
                self._pt_model, device_ids=returnn_distributed.get_device_ids(), **self._torch_distributed_options
            )
        self._optimizer = torch.optim.AdamW(self._pt_model.parameters(), lr=self.learning_rate,
                                            weight_decay=self.config.get("weight_decay", 0.01))
        self._grad_scaler = torch.cuda.amp.GradScaler() if self._use_autocast else None
        self._accum_grad_multiple_step = self.config.get("accum_grad_multiple_step", 1)
        self._train_step_func = self.config["train_step"]

    def _create_data_loader(self, dataset: Dataset) -> DataLoader:
        """PyTorch DataLoader over the RETURNN dataset, wrapped as TorchData datapipes."""
        dataset_reset = returnn_dataset_wrapper.ReturnnDatasetResetMpSharedEpochCallback(
            dataset=dataset, epoch_mp_shared=self._epoch_mp_shared
        )
        wrapped_dataset = returnn_dataset_wrapper.ReturnnDatasetIterDataPipe(dataset, reset_callback=dataset_reset)
        if self.config.get("min_seq_length") or self.config.get("max_seq_length"):
            wrapped_dataset = data_pipeline.LenFilterDataPipe(
                wrapped_dataset, min_seq_length=self.config.get("min_seq_length"),
                max_seq_length=self.config.get("max_seq_length"),
            )
        batches_dataset = data_pipeline.BatchingIterDataPipe(
            wrapped_dataset, batch_size=self.config["batch_size"], max_seqs=self.config.get("max_seqs", -1)
        )
        loader_opts = dict(self.config.get("torch_dataloader_opts") or {})
        if loader_opts.get("num_workers"):
            loader_opts.setdefault("persistent_workers", True)
        return DataLoader(batches_dataset, collate_fn=data_pipeline.collate_batch, batch_size=None, **loader_opts)

    # ---------------------------------------------------------------- training

    def train(self):
        print(f"Starting training at epoch {self._start_epoch}, global train step {self.global_train_step}")
        self.epoch = self._start_epoch - 1
        while self.epoch + 1 <= self._final_epoch:
            self.epoch += 1
            self._epoch_mp_shared.value = self.epoch
            self.init_train_epoch()
            self.train_epoch()
        print(f"Finished training at epoch {self.epoch}, global train step {self.global_train_step}")

    def init_train_epoch(self):
        lr_schedule = self.config.get("dynamic_learning_rate")
        self.learning_rate = lr_schedule(epoch=self.epoch) if lr_schedule else self.learning_rate
        for group in self._optimizer.param_groups:
            group["lr"] = self.learning_rate

    def train_epoch(self):
        print(f"start epoch {self.epoch} global train step {self.global_train_step} with lr {self.learning_rate}")
        accumulated_losses: Dict[str, float] = {}
        accumulated_frames: Dict[str, float] = {}
        step_idx = 0
        epoch_start_time = time.time()

        data_iter = iter(self._train_dataloader)
        self._pt_model.train()

        while True:
            with torch.no_grad():
                extern_data_raw = next(data_iter, None)

            _has_data = torch.tensor([extern_data_raw is not None], dtype=torch.int8, device=self._device)
            if self._use_torch_distributed:
                # if at least one worker has no data left, all workers finish this epoch
                torch.distributed.all_reduce(_has_data, op=torch.distributed.ReduceOp.MIN)
            if not _has_data[0]:
                break

            if step_idx % self._accum_grad_multiple_step == 0:
                self._optimizer.zero_grad()

            losses = self._run_step(extern_data_raw, train_flag=True)
            total_loss = sum(loss for loss, _ in losses.values()) / max(sum(n for _, n in losses.values()), 1.0)

            sync_this_step = (step_idx % self._accum_grad_multiple_step) == (self._accum_grad_multiple_step - 1)
            with self._ddp_pt_model.no_sync() if self._use_torch_distributed and not sync_this_step else nullcontext():
                if self._grad_scaler is not None:
                    self._grad_scaler.scale(total_loss).backward()
                else:
                    total_loss.backward()

            if sync_this_step:
                if self._grad_scaler is not None:
                    self._grad_scaler.step(self._optimizer)
                    self._grad_scaler.update()
                else:
                    self._optimizer.step()

            for name, (loss, frames) in losses.items():
                accumulated_losses[name] = accumulated_losses.get(name, 0.0) + float(loss.detach().cpu())
                accumulated_frames[name] = accumulated_frames.get(name, 0.0) + float(frames)
            _print_process(f"ep {self.epoch} train", step=step_idx,
                           eval_info={k: float(v.detach().cpu()) / max(float(n), 1.0) for k, (v, n) in losses.items()})
            step_idx += 1
            self.global_train_step += 1

        print(f"Trained {step_idx} steps, {time.time() - epoch_start_time:.0f}s elapsed")
        self.epoch_errors[self.epoch] = {f"train_loss_{k}": v / max(accumulated_frames[k], 1.0)
                                         for k, v in accumulated_losses.items()}

        if self.epoch % self._save_model_epoch_interval == 0 or self.epoch == self._final_epoch:
            if self.model_filename:
                self._save_model()
            else:
                print("Not saving model, `model` not specified.")

        if not self._use_torch_distributed or torch.distributed.get_rank() == 0:
            self.eval_model()  # expect: RC101
        if self.config.get("cleanup_old_models"):
            self.cleanup_old_models()

    def eval_model(self):
        """Runs the model on all eval datasets and calculates the losses."""
        self._pt_model.eval()
        eval_dump_str = []

        for dataset_name, dataset in self.eval_datasets.items():
            print(f"Evaluating dataset {dataset_name!r}")
            data_loader = self._eval_dataloaders[dataset_name]

            accumulated_losses: Dict[str, float] = {}
            accumulated_frames: Dict[str, float] = {}
            step_idx = 0
            with torch.no_grad():
                for extern_data_raw in data_loader:
                    losses = self._run_step(extern_data_raw, train_flag=False)
                    for name, (loss, frames) in losses.items():
                        accumulated_losses[name] = accumulated_losses.get(name, 0.0) + float(loss.cpu())
                        accumulated_frames[name] = accumulated_frames.get(name, 0.0) + float(frames)
                    step_idx += 1

            assert step_idx > 0, f"No data in dataset {dataset_name!r}."
            scores = {k: v / max(accumulated_frames[k], 1.0) for k, v in accumulated_losses.items()}
            self.epoch_errors.setdefault(self.epoch, {}).update(
                {f"{dataset_name}_loss_{k}": v for k, v in scores.items()})
            eval_dump_str.append(f"{dataset_name}: score {scores}")

        print(" ".join(eval_dump_str) if eval_dump_str else "(No evaluations.)", flush=True)

    def _run_step(self, extern_data_raw: dict, *, train_flag: bool) -> Dict[str, tuple]:
        extern_data = {k: (v.to(self._device) if isinstance(v, torch.Tensor) else v)
                       for k, v in extern_data_raw.items()}
        ddp_ctx = (returnn_distributed.ddp_train_forward_ctx(pt_model=self._ddp_pt_model)
                   if isinstance(self._ddp_pt_model, DistributedDataParallel) else nullcontext())
        amp_ctx = autocast(device_type="cuda", dtype=self._autocast_dtype) if self._use_autocast else nullcontext()
        with amp_ctx, ddp_ctx:
            # the original (unwrapped) module is passed to the user's train_step
            return self._train_step_func(model=self._orig_model, extern_data=extern_data, train_flag=train_flag)

    # ---------------------------------------------------------------- checkpoints

    def _save_model(self):
        if self._use_torch_distributed and torch.distributed.get_rank() != 0:
            return
        filename = f"{self.model_filename}.{self.epoch:03d}.pt"
        os.makedirs(os.path.dirname(filename) or ".", exist_ok=True)
        torch.save({"model": self._pt_model.state_dict(), "epoch": self.epoch,
                    "step": self.global_train_step, "optimizer": self._optimizer.state_dict()}, filename)
        print(f"Saved model {filename}")

    def cleanup_old_models(self):
        if self._use_torch_distributed and torch.distributed.get_rank() != 0:
            return
        keep_last = self.config.get("cleanup_old_models", {}).get("keep_last_n", 2)
        for epoch in range(1, self.epoch - keep_last + 1):
            filename = f"{self.model_filename}.{epoch:03d}.pt"
            if os.path.exists(filename):
                os.remove(filename)
