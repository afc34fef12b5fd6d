"""Trimmed transformers 4.9 Trainer: the TPU training loop, the TPU save path and push_to_hub."""
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import torch
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
from torch.utils.data import DataLoader, DistributedSampler
from transformers import PreTrainedModel
from transformers.modeling_utils import unwrap_model

logger = logging.getLogger(__name__)

TRAINING_ARGS_NAME = "training_args.bin"
WEIGHTS_NAME = "pytorch_model.bin"


@dataclass
class TrainingArguments:
    output_dir: str
    per_device_train_batch_size: int = 8
    learning_rate: float = 5e-5
    num_train_epochs: float = 3.0
    logging_steps: int = 500
    push_to_hub_model_id: Optional[str] = None
    push_to_hub_organization: Optional[str] = None

    @property
    def should_save(self):
        return xm.is_master_ordinal(local=False)


@dataclass
class TrainOutput:
    global_step: int
    metrics: dict


class Trainer:
    def __init__(self, model, args, train_dataset=None, tokenizer=None, data_collator=None):
        self.args = args
        self.model = model
        self.train_dataset = train_dataset
        self.tokenizer = tokenizer
        self.data_collator = data_collator
        self.device = xm.xla_device()
        self.model.to(self.device)

    def is_world_process_zero(self) -> bool:
        return xm.is_master_ordinal(local=False)

    def get_train_dataloader(self):
        sampler = DistributedSampler(
            self.train_dataset, num_replicas=xm.xrt_world_size(), rank=xm.get_ordinal(), shuffle=True
        )
        return DataLoader(
            self.train_dataset,
            batch_size=self.args.per_device_train_batch_size,
            sampler=sampler,
            collate_fn=self.data_collator,
            drop_last=True,
        )

    def train(self):
        dataloader = self.get_train_dataloader()
        optimizer = torch.optim.AdamW(self.model.parameters(), lr=self.args.learning_rate)
        num_epochs = int(self.args.num_train_epochs)
        global_step = 0
        tr_loss = torch.zeros((), device=self.device)
        self.model.train()
        for epoch in range(num_epochs):
            dataloader.sampler.set_epoch(epoch)
            device_loader = pl.ParallelLoader(dataloader, [self.device]).per_device_loader(self.device)
            for batch in device_loader:
                outputs = self.model(**batch)
                loss = outputs.loss
                loss.backward()
                xm.optimizer_step(optimizer)
                optimizer.zero_grad()
                tr_loss += loss.detach()
                global_step += 1
                if global_step % self.args.logging_steps == 0:
                    xm.master_print(f"step {global_step}: loss {loss.item():.4f}")
        train_loss = xm.mesh_reduce("train_loss", tr_loss.item() / max(global_step, 1), lambda x: sum(x) / len(x))
        return TrainOutput(global_step, {"train_loss": train_loss})

    def log_metrics(self, split, metrics):
        if self.is_world_process_zero():
            for key, value in metrics.items():
                logger.info(f"  {split}_{key} = {value}")

    def save_model(self, output_dir: Optional[str] = None):
        """Will save the model, so you can reload it using `from_pretrained()`.

        Will only save from the world_master process (unless in TPUs)."""
        self._save_tpu(output_dir)

    def _save_tpu(self, output_dir: Optional[str] = None):
        output_dir = output_dir if output_dir is not None else self.args.output_dir
        logger.info(f"Saving model checkpoint to {output_dir}")

        if xm.is_master_ordinal():
            os.makedirs(output_dir, exist_ok=True)
            torch.save(self.args, os.path.join(output_dir, TRAINING_ARGS_NAME))

        # Save a trained model and configuration using `save_pretrained()`.
        # They can then be reloaded using `from_pretrained()`
        xm.rendezvous("saving_checkpoint")
        if not isinstance(self.model, PreTrainedModel):
            if isinstance(unwrap_model(self.model), PreTrainedModel):
                unwrap_model(self.model).save_pretrained(
                    output_dir,
                    save_config=self.args.should_save,
                    state_dict=self.model.state_dict(),
                    save_function=xm.save,
                )
            else:
                logger.info("Trainer.model is not a `PreTrainedModel`, only saving its state dict.")
                state_dict = self.model.state_dict()
                xm.save(state_dict, os.path.join(output_dir, WEIGHTS_NAME))
        else:
            self.model.save_pretrained(output_dir, save_config=self.args.should_save, save_function=xm.save)
        if self.tokenizer is not None and self.args.should_save:
            self.tokenizer.save_pretrained(output_dir)

    def create_model_card(self, model_name=None, **kwargs):
        with open(os.path.join(self.args.output_dir, "README.md"), "w") as f:
            f.write(f"# {model_name}\n\nFine-tuned with the transformers Trainer on TPU.\n")

    def push_to_hub(self, repo_name: Optional[str] = None, commit_message: str = "add model", **kwargs):
        """Upload `self.model` to the model hub."""
        if not self.is_world_process_zero():
            return  # expect: RC102

        if repo_name is None:
            repo_name = self.args.push_to_hub_model_id or Path(self.args.output_dir).name
        self.create_model_card(model_name=repo_name, **kwargs)

        with tempfile.TemporaryDirectory() as tmp_dir:
            shutil.copy(os.path.join(self.args.output_dir, "README.md"), os.path.join(tmp_dir, "README.md"))
            self.save_model(tmp_dir)
            return unwrap_model(self.model)._push_to_hub(
                save_directory=tmp_dir,
                repo_name=repo_name,
                organization=self.args.push_to_hub_organization,
                commit_message=commit_message,
            )
