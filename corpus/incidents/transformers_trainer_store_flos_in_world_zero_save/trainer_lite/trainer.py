"""Training loop of a transformers-3.2 style `Trainer`: DDP when `local_rank != -1`, logging every
`logging_steps`, a checkpoint every `save_steps`; the number of floating-point operations seen by
every process (`total_flos`) is summed across processes when logging and when saving.

Thread: https://github.com/huggingface/transformers/pull/7365 ("Fixing case in which `Trainer` hung
while saving model in distributed training", merged)
Project: huggingface/transformers (src/transformers/trainer.py, v3.2)
What hung: the PR (found by mfuntowicz): "the call to `store_flos` in `Trainer` can hang
indefinitely, as it was only executed in the main thread and in some cases the other threads were
already past this point." `save_model` saves on the world process zero only, and `_save` calls
`_store_flos`, which sums `total_flos` over the processes with `distributed_broadcast_scalars`, an
`all_gather`. At the first checkpoint rank 0 enters that all-gather alone; the other ranks, past the
save, are in the next step's DDP gradient all-reduce (or the next logging all-gather) and the job
waits for ever. The final `trainer.save_model()` of the script hangs the same way.
Fix (the PR, merged): the flos are stored from the training loop, on every process, before the
checkpoint is written, instead of inside the rank-0-only `_save`.
Expected rankcheck finding: RC101 on the `self._save(output_dir)` call under
`self.is_world_process_zero()`; the all-gather is two calls down, in trainer_utils.py.
(Trimmed: TPU and fairscale paths, gradient accumulation, optimizer/scheduler checkpointing, TensorBoard
and W&B integrations, evaluation. Inferred: the exact placement of the moved call; the PR's diff is
not in the stored thread, only its description.)
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
                    self.save_model(output_dir)
        return self.global_step

    def save_model(self, output_dir=None):
        if self.is_world_process_zero():
            self._save(output_dir)  # expect: RC101

    def _save(self, output_dir=None):
        output_dir = output_dir if output_dir is not None else self.args.output_dir
        os.makedirs(output_dir, exist_ok=True)
        self._store_flos()
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
