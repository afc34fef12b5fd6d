# Copyright 2020-present the HuggingFace Inc. team.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Trimmed for the incident corpus: `Trainer.train` / `_inner_training_loop` of transformers 4.37
# (DDP through accelerate; no DeepSpeed/FSDP/TPU paths, no resuming, no evaluation).

import math
import os
import time

import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, RandomSampler
from transformers.optimization import get_scheduler
from transformers.trainer_callback import TrainerState
from transformers.trainer_pt_utils import get_parameter_names
from transformers.trainer_utils import TrainOutput, speed_metrics
from transformers.utils import logging

logger = logging.get_logger(__name__)


class Trainer:
    def __init__(self, model, args, data_collator=None, train_dataset=None, tokenizer=None):
        self.args = args
        self.model = model
        self.data_collator = data_collator
        self.train_dataset = train_dataset
        self.tokenizer = tokenizer
        self.accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps)
        self.state = TrainerState()
        self.optimizer = None
        self.lr_scheduler = None
        self._total_loss_scalar = 0.0
        self._globalstep_last_logged = 0

    # ----------------------------------------------------------------------------------------------
    # Data
    # ----------------------------------------------------------------------------------------------
    def get_train_dataloader(self) -> DataLoader:
        dataloader_params = {
            "batch_size": self.args.per_device_train_batch_size,
            "collate_fn": self.data_collator,
            "num_workers": self.args.dataloader_num_workers,
            "pin_memory": self.args.dataloader_pin_memory,
            "sampler": RandomSampler(self.train_dataset),
            "drop_last": self.args.dataloader_drop_last,
        }
        return self.accelerator.prepare(DataLoader(self.train_dataset, **dataloader_params))

    # ----------------------------------------------------------------------------------------------
    # Optimizer
    # ----------------------------------------------------------------------------------------------
    def create_optimizer_and_scheduler(self, num_training_steps: int):
        decay_parameters = [n for n in get_parameter_names(self.model, [torch.nn.LayerNorm]) if "bias" not in n]
        grouped = [
            {
                "params": [p for n, p in self.model.named_parameters() if n in decay_parameters and p.requires_grad],
                "weight_decay": self.args.weight_decay,
            },
            {
                "params": [p for n, p in self.model.named_parameters() if n not in decay_parameters and p.requires_grad],
                "weight_decay": 0.0,
            },
        ]
        self.optimizer = torch.optim.AdamW(
            grouped, lr=self.args.learning_rate, betas=(self.args.adam_beta1, self.args.adam_beta2), eps=self.args.adam_epsilon
        )
        self.lr_scheduler = get_scheduler(
            self.args.lr_scheduler_type,
            optimizer=self.optimizer,
            num_warmup_steps=self.args.get_warmup_steps(num_training_steps),
            num_training_steps=num_training_steps,
        )

    # ----------------------------------------------------------------------------------------------
    # Training
    # ----------------------------------------------------------------------------------------------
    def train(self):
        return self._inner_training_loop(batch_size=self.args.per_device_train_batch_size, args=self.args)

    def _inner_training_loop(self, batch_size=None, args=None):
        train_dataloader = self.get_train_dataloader()
        total_train_batch_size = batch_size * args.gradient_accumulation_steps * args.world_size
        num_update_steps_per_epoch = max(len(train_dataloader) // args.gradient_accumulation_steps, 1)
        if args.max_steps > 0:
            max_steps = args.max_steps
            num_train_epochs = args.max_steps // num_update_steps_per_epoch + int(
                args.max_steps % num_update_steps_per_epoch > 0
            )
        else:
            max_steps = math.ceil(args.num_train_epochs * num_update_steps_per_epoch)
            num_train_epochs = math.ceil(args.num_train_epochs)

        self.create_optimizer_and_scheduler(num_training_steps=max_steps)
        model, self.optimizer, self.lr_scheduler = self.accelerator.prepare(self.model, self.optimizer, self.lr_scheduler)
        self.model_wrapped = model

        self.state = TrainerState()
        self.state.max_steps = max_steps
        self.state.num_train_epochs = num_train_epochs
        self.state.logging_steps = args.logging_steps

        logger.info("***** Running training *****")
        logger.info(f"  Num Epochs = {num_train_epochs:,}")
        logger.info(f"  Total train batch size (w. parallel, distributed & accumulation) = {total_train_batch_size:,}")
        logger.info(f"  Total optimization steps = {max_steps:,}")

        tr_loss = torch.tensor(0.0).to(args.device)
        self._total_loss_scalar = 0.0
        self._globalstep_last_logged = self.state.global_step
        model.zero_grad()
        start_time = time.time()
        total_batched_samples = 0

        for epoch in range(num_train_epochs):
            epoch_iterator = train_dataloader
            steps_in_epoch = len(epoch_iterator)

            step = -1
            for step, inputs in enumerate(epoch_iterator):
                total_batched_samples += 1

                if self.args.include_num_input_tokens_seen:
                    main_input_name = getattr(self.model, "main_input_name", "input_ids")
                    if main_input_name not in inputs:
                        logger.warning(
                            "Tried to track the number of tokens seen, however the current model is "
                            "not configured properly to know what item is the input. To fix this, add "
                            "a `main_input_name` attribute to the model class you are using."
                        )
                    else:
                        self.state.num_input_tokens_seen += self.accelerator.gather(inputs[main_input_name]).numel()  # expect: RC104

                with self.accelerator.accumulate(model):
                    tr_loss_step = self.training_step(model, inputs)

                if args.logging_nan_inf_filter and (torch.isnan(tr_loss_step) or torch.isinf(tr_loss_step)):
                    # if loss is nan or inf simply add the average of previous logged losses
                    tr_loss += tr_loss / (1 + self.state.global_step - self._globalstep_last_logged)
                else:
                    tr_loss += tr_loss_step

                is_last_step_and_steps_less_than_grad_acc = (
                    steps_in_epoch <= args.gradient_accumulation_steps and (step + 1) == steps_in_epoch
                )
                if total_batched_samples % args.gradient_accumulation_steps == 0 or is_last_step_and_steps_less_than_grad_acc:
                    if args.max_grad_norm is not None and args.max_grad_norm > 0:
                        self.accelerator.clip_grad_norm_(model.parameters(), args.max_grad_norm)
                    self.optimizer.step()
                    self.lr_scheduler.step()
                    model.zero_grad()
                    self.state.global_step += 1
                    self.state.epoch = epoch + (step + 1) / steps_in_epoch
                    self._maybe_log(tr_loss, model)

                if self.state.global_step >= max_steps:
                    break
            if self.state.global_step >= max_steps:
                break

        self._total_loss_scalar += tr_loss.item()
        train_loss = self._total_loss_scalar / max(self.state.global_step, 1)
        metrics = speed_metrics("train", start_time, num_samples=max_steps * total_train_batch_size)
        metrics["train_loss"] = train_loss
        metrics["num_input_tokens_seen"] = self.state.num_input_tokens_seen
        self.log(metrics)
        return TrainOutput(self.state.global_step, train_loss, metrics)

    def training_step(self, model, inputs):
        model.train()
        outputs = model(**inputs)
        loss = outputs["loss"] if isinstance(outputs, dict) else outputs[0]
        if self.args.n_gpu > 1:
            loss = loss.mean()
        self.accelerator.backward(loss)
        return loss.detach() / self.args.gradient_accumulation_steps

    def _nested_gather(self, tensors):
        if tensors is None:
            return None
        return self.accelerator.gather(tensors)

    def _maybe_log(self, tr_loss, model):
        if self.state.global_step - self._globalstep_last_logged < self.args.logging_steps:
            return
        # all_gather + mean() to get average loss over all processes
        tr_loss_scalar = self._nested_gather(tr_loss).mean().item()
        # reset tr_loss to zero
        tr_loss -= tr_loss
        logs = {
            "loss": round(tr_loss_scalar / (self.state.global_step - self._globalstep_last_logged), 4),
            "learning_rate": self.lr_scheduler.get_last_lr()[0],
        }
        if self.args.include_num_input_tokens_seen:
            logs["num_input_tokens_seen"] = self.state.num_input_tokens_seen
        self._total_loss_scalar += tr_loss_scalar
        self._globalstep_last_logged = self.state.global_step
        self.log(logs)

    def log(self, logs):
        if self.state.epoch is not None:
            logs["epoch"] = round(self.state.epoch, 2)
        self.state.log_history.append({**logs, "step": self.state.global_step})
        if self.accelerator.is_main_process:
            logger.info(str(logs))

    def save_model(self, output_dir=None):
        output_dir = output_dir if output_dir is not None else self.args.output_dir
        self.accelerator.wait_for_everyone()
        if self.accelerator.is_main_process:
            os.makedirs(output_dir, exist_ok=True)
            self.accelerator.unwrap_model(self.model_wrapped).save_pretrained(output_dir, safe_serialization=True)
            if self.tokenizer is not None:
                self.tokenizer.save_pretrained(output_dir)
