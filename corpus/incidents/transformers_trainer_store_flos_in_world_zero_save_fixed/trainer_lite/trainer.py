"""Training loop of a transformers-3.2 style `Trainer`: DDP when `local_rank != -1`, logging every
`logging_steps`, a checkpoint every `save_steps`; the number of floating-point operations seen by
every process (`total_flos`) is summed across processes when logging and when saving.

Safe twin of transformers_trainer_store_flos_in_world_zero_save: as in the merged fix of
transformers#7365, the flos are summed (an all-gather) from the training loop on every process,
before the checkpoint is written and once at the end of training, and `_save`, which runs on the
world process zero only, no longer communicates.

Thread: https://github.com/huggingface/transformers/pull/7365
"""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from transformers import PreTrainedModel

from trainer_lite.trainer_utils import PREFIX_CHECKPOINT_DIR, distributed_broadcast_scalars


class Trainer:
    def __init__(self, model: PreTrainedModel, args, train_dataset, data_collator, tokenizer=None):
        self.model = model.to(args.device)
        self.args = args
        self.train_dataset = train_dataset
        self.data_collator = data_collator
        self.tokenizer = tokenizer
        self.global_step = 0
        self.total_flos = 0

    def is_world_process_zero(self) -> bool:
        return self.args.local_rank == -1 or dist.get_rank() == 0

    def get_train_dataloader(self):
        sampler = DistributedSampler(self.train_dataset) if self.args.local_rank != -1 else None
        return DataLoader(self.train_dataset, batch_size=self.args.per_device_train_batch_size,
                          sampler=sampler, shuffle=sampler is None, collate_fn=self.data_collator)

    def log(self, logs):
        if self.total_flos is not None:
            if self.args.local_rank != -1:
                logs["total_flos"] = distributed_broadcast_scalars([self.total_flos]).sum().item()
            else:
                logs["total_flos"] = self.total_flos
        if self.is_world_process_zero():
            print({**logs, "step": self.global_step})

    def train(self):
        train_dataloader = self.get_train_dataloader()
        model = self.model
        if self.args.local_rank != -1:
            model = DistributedDataParallel(model, device_ids=[self.args.local_rank],
                                            output_device=self.args.local_rank, find_unused_parameters=True)
        optimizer = torch.optim.AdamW(model.parameters(), lr=self.args.learning_rate)
        model.train()
        for epoch in range(int(self.args.num_train_epochs)):
            if isinstance(train_dataloader.sampler, DistributedSampler):
                train_dataloader.sampler.set_epoch(epoch)
            for inputs in train_dataloader:
                inputs = {k: v.to(self.args.device) for k, v in inputs.items()}
                loss = model(**inputs)[0]
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), self.args.max_grad_norm)
                optimizer.step()
                model.zero_grad()
                self.total_flos += self.model.floating_point_ops(inputs)
                self.global_step += 1

                if self.global_step % self.args.logging_steps == 0:
                    self.log({"loss": loss.item(), "epoch": epoch})
                if self.global_step % self.args.save_steps == 0:
                    output_dir = os.path.join(self.args.output_dir, f"{PREFIX_CHECKPOINT_DIR}-{self.global_step}")
                    self._store_flos()
                    self.save_model(output_dir)
        self._store_flos()
        return self.global_step

    def save_model(self, output_dir=None):
        if self.is_world_process_zero():
            self._save(output_dir)

    def _save(self, output_dir=None):
        output_dir = output_dir if output_dir is not None else self.args.output_dir
        os.makedirs(output_dir, exist_ok=True)
        self.model.save_pretrained(output_dir)
        if self.tokenizer is not None:
            self.tokenizer.save_pretrained(output_dir)
        torch.save(self.args, os.path.join(output_dir, "training_args.bin"))

    def _store_flos(self):
        # Storing the number of floating-point operations that went into the model
        if self.total_flos is not None:
            if self.args.local_rank != -1:
                total_flos = distributed_broadcast_scalars([self.total_flos]).sum().item()
            else:
                total_flos = self.total_flos
            if total_flos > 0:
                self.model.config.total_flos = total_flos
