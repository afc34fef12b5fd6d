# Trimmed copy of src/axolotl/utils/trainer.py (axolotl, August 2023): the Trainer subclass that
# feeds the HF training loop from the multipack loader when sample_packing is on.
import os
from dataclasses import dataclass, field
from typing import Optional, Union

import torch
from datasets import Dataset
from torch.utils.data import DataLoader, DistributedSampler
from transformers import DataCollatorForSeq2Seq, Trainer, TrainingArguments
from transformers.trainer_pt_utils import SequentialDistributedSampler

from .dataloader import MultipackDistributedDataloader


@dataclass
class AxolotlTrainingArguments(TrainingArguments):
    """Extend the base TrainingArguments for axolotl helpers."""

    sample_packing: bool = field(default=False, metadata={"help": "Use sample packing for efficient training."})
    sample_packing_efficiency: float = field(
        default=1.0, metadata={"help": "Sample packing efficiency for calculating batch length."}
    )
    max_seq_length: int = field(default=2048, metadata={"help": "The maximum sequence length the model can handle"})
    sample_packing_seq_len_multiplier: int = field(
        default=1, metadata={"help": "the multiplier for the max len for packed sequences"}
    )


class AxolotlTrainer(Trainer):
    """Extend the base Trainer for axolotl helpers."""

    args = None  # type: AxolotlTrainingArguments

    def _get_train_sampler(self) -> Optional[torch.utils.data.Sampler]:
        if self.args.world_size > 1 and self.args.sample_packing:
            return DistributedSampler(
                self.train_dataset,
                num_replicas=self.args.world_size,
                rank=self.args.process_index,
                seed=self.args.seed,
            )
        return super()._get_train_sampler()

    def _get_eval_sampler(self, eval_dataset: Dataset) -> Optional[torch.utils.data.Sampler]:
        if self.args.world_size > 1 and self.args.sample_packing:
            return SequentialDistributedSampler(
                eval_dataset,
                num_replicas=self.args.world_size,
                rank=self.args.process_index,
                batch_size=self.args.per_device_eval_batch_size,
            )
        return super()._get_eval_sampler(eval_dataset)

    def get_train_dataloader(self) -> Union[DataLoader, MultipackDistributedDataloader]:
        if self.args.sample_packing:
            train_sampler = self._get_train_sampler()
            return self.accelerator.prepare(
                MultipackDistributedDataloader(
                    self.train_dataset,
                    batch_size=self._train_batch_size,
                    seq_max_length=self.args.max_seq_length,
                    collate_fn=self.data_collator,
                    sampler=train_sampler,
                    packing_efficiency_estimate=self.args.sample_packing_efficiency,
                    sample_packing_seq_len_multiplier=self.args.sample_packing_seq_len_multiplier,
                    device_count=int(os.environ.get("WORLD_SIZE", 1)),
                )
            )
        return super().get_train_dataloader()

    def get_eval_dataloader(
        self, eval_dataset: Optional[Dataset] = None
    ) -> Union[DataLoader, MultipackDistributedDataloader]:
        if self.args.sample_packing:
            eval_dataset = eval_dataset if eval_dataset is not None else self.eval_dataset
            eval_sampler = self._get_eval_sampler(eval_dataset)
            return self.accelerator.prepare(
                MultipackDistributedDataloader(
                    eval_dataset,
                    batch_size=self.args.eval_batch_size,
                    seq_max_length=self.args.max_seq_length,
                    collate_fn=self.data_collator,
                    sampler=eval_sampler,
                    packing_efficiency_estimate=self.args.sample_packing_efficiency,
                    sample_packing_seq_len_multiplier=self.args.eval_batch_size,
                    device_count=int(os.environ.get("WORLD_SIZE", 1)),
                )
            )
        return super().get_eval_dataloader(eval_dataset)


def setup_trainer(cfg, train_dataset, eval_dataset, model, tokenizer, total_num_steps):
    training_args = AxolotlTrainingArguments(
        output_dir=cfg["output_dir"],
        per_device_train_batch_size=cfg["micro_batch_size"],
        per_device_eval_batch_size=cfg.get("eval_batch_size", cfg["micro_batch_size"]),
        gradient_accumulation_steps=cfg["gradient_accumulation_steps"],
        num_train_epochs=cfg["num_epochs"],
        max_steps=total_num_steps if cfg.get("max_steps") else -1,
        learning_rate=cfg["learning_rate"],
        lr_scheduler_type=cfg.get("lr_scheduler", "cosine"),
        warmup_steps=cfg.get("warmup_steps", 10),
        logging_steps=cfg.get("logging_steps", 1),
        evaluation_strategy="steps" if eval_dataset is not None else "no",
        eval_steps=cfg.get("eval_steps", 50),
        save_strategy="steps",
        save_steps=cfg.get("save_steps", 200),
        save_total_limit=4,
        bf16=cfg.get("bf16", True),
        gradient_checkpointing=cfg.get("gradient_checkpointing", False),
        ddp_find_unused_parameters=False if cfg.get("adapter") else None,
        report_to="wandb" if cfg.get("wandb_project") else "none",
        sample_packing=cfg.get("sample_packing", False),
        sample_packing_efficiency=cfg.get("sample_packing_eff_est", 1.0),
        max_seq_length=cfg["sequence_len"],
        sample_packing_seq_len_multiplier=cfg["micro_batch_size"],
    )
    data_collator = DataCollatorForSeq2Seq(tokenizer, return_tensors="pt", padding="longest")
    return AxolotlTrainer(
        model=model,
        args=training_args,
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
        tokenizer=tokenizer,
        data_collator=data_collator,
    )
