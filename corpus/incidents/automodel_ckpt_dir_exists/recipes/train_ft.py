"""Fine-tuning recipe driving BaseRecipe.save_checkpoint (trimmed from
nemo_automodel/recipes/llm/train_ft.py).

Part of the reconstruction of https://github.com/NVIDIA-NeMo/Automodel/issues/3254;
see recipes/base_recipe.py for the incident and the expected finding.
"""
import argparse
import os

import torch
import torch.distributed as dist
from torch.distributed.fsdp import fully_shard
from torch.utils.data import DistributedSampler
from torchdata.stateful_dataloader import StatefulDataLoader
from transformers import AutoModelForCausalLM

from components.checkpointing import Checkpointer, CheckpointingConfig
from recipes.base_recipe import BaseRecipe


class TrainFinetuneRecipeForNextTokenPrediction(BaseRecipe):
    def setup(self, train_dataset):
        dist.init_process_group(backend="nccl")
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
        model = AutoModelForCausalLM.from_pretrained(self.cfg.model_name, torch_dtype=torch.bfloat16)
        for layer in model.model.layers:
            fully_shard(layer)
        self.model = fully_shard(model)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=self.cfg.lr)
        sampler = DistributedSampler(train_dataset, shuffle=True, seed=self.cfg.seed)
        self.dataloader = StatefulDataLoader(train_dataset, batch_size=self.cfg.local_batch_size, sampler=sampler)
        self.step_scheduler_step = 0
        restored = self.load_checkpoint()
        if restored is not None:
            self.step_scheduler_step = restored["step"]

    def _run_train_step(self, batch):
        batch = {k: v.cuda(non_blocking=True) for k, v in batch.items()}
        loss = self.model(**batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.max_grad_norm)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        reduced = loss.detach().clone()
        dist.all_reduce(reduced, op=dist.ReduceOp.AVG)
        return reduced.item()

    def run_train_validation_loop(self):
        for epoch in range(self.cfg.num_epochs):
            self.dataloader.sampler.set_epoch(epoch)
            for batch in self.dataloader:
                train_loss = self._run_train_step(batch)
                self.step_scheduler_step += 1
                if self.step_scheduler_step % self.cfg.ckpt_every_steps == 0:
                    self.save_checkpoint(epoch, self.step_scheduler_step, train_loss)
                if self.step_scheduler_step >= self.cfg.max_steps:
                    self.save_checkpoint(epoch, self.step_scheduler_step, train_loss)
                    return


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name", default="meta-llama/Llama-3.2-1B")
    parser.add_argument("--dataset_path", required=True)
    parser.add_argument("--checkpoint_dir", default="checkpoints/")
    parser.add_argument("--lr", type=float, default=1e-5)
    parser.add_argument("--local_batch_size", type=int, default=4)
    parser.add_argument("--num_epochs", type=int, default=1)
    parser.add_argument("--max_steps", type=int, default=1000)
    parser.add_argument("--ckpt_every_steps", type=int, default=100)
    parser.add_argument("--max_grad_norm", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=42)
    cfg = parser.parse_args()

    from datasets import load_from_disk

    train_dataset = load_from_disk(cfg.dataset_path).with_format("torch")
    checkpointer = Checkpointer(CheckpointingConfig(enabled=True, checkpoint_dir=cfg.checkpoint_dir))
    recipe = TrainFinetuneRecipeForNextTokenPrediction(cfg, checkpointer)
    recipe.setup(train_dataset)
    recipe.run_train_validation_loop()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
