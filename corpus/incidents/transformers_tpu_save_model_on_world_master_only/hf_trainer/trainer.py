"""Trainer of transformers 2.9 (trimmed): TPU/DDP training loop and checkpoint saving."""
import logging
import os
import re
import shutil
from pathlib import Path
from typing import Optional

import torch
from torch.utils.data.dataloader import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torch.utils.data.sampler import RandomSampler
from tqdm.auto import tqdm
from transformers import AdamW, get_linear_schedule_with_warmup

from .modeling_utils import PreTrainedModel
from .training_args import TrainingArguments, is_tpu_available

if is_tpu_available():
    import torch_xla.core.xla_model as xm
    import torch_xla.distributed.parallel_loader as pl

logger = logging.getLogger(__name__)

PREFIX_CHECKPOINT_DIR = "checkpoint"


def get_tpu_sampler(dataset):
    if xm.xrt_world_size() <= 1:
        return RandomSampler(dataset)
    return DistributedSampler(dataset, num_replicas=xm.xrt_world_size(), rank=xm.get_ordinal())


class Trainer:
    model: PreTrainedModel
    args: TrainingArguments

    def __init__(self, model: PreTrainedModel, args: TrainingArguments, data_collator=None, train_dataset=None):
        self.model = model
        self.args = args
        self.data_collator = data_collator
        self.train_dataset = train_dataset
        self.global_step = 0
        if self.is_local_master():
            os.makedirs(self.args.output_dir, exist_ok=True)
        if is_tpu_available():
            # Set an xla_device flag on the model's config.
            # We'll find a more elegant and not need to do this in the future.
            self.model.config.xla_device = True

    def get_train_dataloader(self) -> DataLoader:
        if is_tpu_available():
            train_sampler = get_tpu_sampler(self.train_dataset)
        else:
            train_sampler = (
                RandomSampler(self.train_dataset) if self.args.local_rank == -1 else DistributedSampler(self.train_dataset)
            )
        return DataLoader(
            self.train_dataset,
            batch_size=self.args.per_device_train_batch_size,
            sampler=train_sampler,
            collate_fn=self.data_collator,
        )

    def train(self, model_path: Optional[str] = None):
        train_dataloader = self.get_train_dataloader()
        t_total = int(len(train_dataloader) * self.args.num_train_epochs)
        optimizer = AdamW(self.model.parameters(), lr=self.args.learning_rate, eps=self.args.adam_epsilon)
        scheduler = get_linear_schedule_with_warmup(
            optimizer, num_warmup_steps=self.args.warmup_steps, num_training_steps=t_total
        )

        model = self.model
        device = xm.xla_device() if is_tpu_available() else torch.device("cuda", max(self.args.local_rank, 0))
        model.to(device)
        if self.args.local_rank != -1 and not is_tpu_available():
            model = torch.nn.parallel.DistributedDataParallel(
                model, device_ids=[self.args.local_rank], output_device=self.args.local_rank
            )

        model.train()
        for epoch in range(int(self.args.num_train_epochs)):
            if is_tpu_available():
                parallel_loader = pl.ParallelLoader(train_dataloader, [device]).per_device_loader(device)
                epoch_iterator = tqdm(parallel_loader, desc="Iteration", disable=not self.is_local_master())
            else:
                epoch_iterator = tqdm(train_dataloader, desc="Iteration", disable=not self.is_local_master())

            for step, inputs in enumerate(epoch_iterator):
                inputs = {k: v.to(device) for k, v in inputs.items()}
                outputs = model(**inputs)
                loss = outputs[0]
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), self.args.max_grad_norm)
                if is_tpu_available():
                    xm.optimizer_step(optimizer)
                else:
                    optimizer.step()
                scheduler.step()
                model.zero_grad()
                self.global_step += 1

                if self.args.save_steps > 0 and self.global_step % self.args.save_steps == 0:
                    # In all cases (even distributed/parallel), self.model is always a reference
                    # to the model we want to save.
                    if hasattr(model, "module"):
                        assert model.module is self.model
                    else:
                        assert model is self.model
                    # Save model checkpoint
                    output_dir = os.path.join(self.args.output_dir, f"{PREFIX_CHECKPOINT_DIR}-{self.global_step}")
                    self.save_model(output_dir)
                    if self.is_world_master():
                        self._rotate_checkpoints()
                    if is_tpu_available():
                        xm.rendezvous("saving_optimizer_states")
                        xm.save(optimizer.state_dict(), os.path.join(output_dir, "optimizer.pt"))
                        xm.save(scheduler.state_dict(), os.path.join(output_dir, "scheduler.pt"))
                    elif self.is_world_master():
                        torch.save(optimizer.state_dict(), os.path.join(output_dir, "optimizer.pt"))
                        torch.save(scheduler.state_dict(), os.path.join(output_dir, "scheduler.pt"))
        return self.global_step

    def is_local_master(self) -> bool:
        if is_tpu_available():
            return xm.is_master_ordinal(local=True)
        else:
            return self.args.local_rank in [-1, 0]

    def is_world_master(self) -> bool:
        """
        This will be True only in one process, even in distributed mode,
        even when training on multiple machines.
        """
        if is_tpu_available():
            return xm.is_master_ordinal(local=False)
        else:
            return self.args.local_rank == -1 or torch.distributed.get_rank() == 0

    def save_model(self, output_dir: Optional[str] = None):
        """
        Saving best-practices: if you use default names for the model,
        you can reload it using from_pretrained().

        Will only save from the master process.
        """
        if self.is_world_master():
            self._save(output_dir)  # expect: RC101

    def _save(self, output_dir: Optional[str] = None):
        output_dir = output_dir if output_dir is not None else self.args.output_dir
        os.makedirs(output_dir, exist_ok=True)
        logger.info("Saving model checkpoint to %s", output_dir)
        # Save a trained model and configuration using `save_pretrained()`.
        # They can then be reloaded using `from_pretrained()`
        if not isinstance(self.model, PreTrainedModel):
            raise ValueError("Trainer.model appears to not be a PreTrainedModel")
        self.model.save_pretrained(output_dir)

        # Good practice: save your training arguments together with the trained model
        torch.save(self.args, os.path.join(output_dir, "training_args.bin"))

    def _rotate_checkpoints(self) -> None:
        if self.args.save_total_limit is None or self.args.save_total_limit <= 0:
            return
        ordering_and_checkpoint_path = []
        for path in Path(self.args.output_dir).glob(f"{PREFIX_CHECKPOINT_DIR}-*"):
            match = re.match(f".*{PREFIX_CHECKPOINT_DIR}-([0-9]+)", str(path))
            if match and match.groups():
                ordering_and_checkpoint_path.append((int(match.groups()[0]), str(path)))
        checkpoints_sorted = [path for _, path in sorted(ordering_and_checkpoint_path)]
        number_of_checkpoints_to_delete = max(0, len(checkpoints_sorted) - self.args.save_total_limit)
        for checkpoint in checkpoints_sorted[:number_of_checkpoints_to_delete]:
            logger.info("Deleting older checkpoint [{}] due to args.save_total_limit".format(checkpoint))
            shutil.rmtree(checkpoint)
