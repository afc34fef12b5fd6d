"""Language-model fine-tuning on a TPU v3-8 with the transformers Trainer (examples/xla_spawn.py +
run_language_modeling.py, transformers 2.9), checkpointing every `--save_steps` steps and at the end.

Thread: https://github.com/huggingface/transformers/pull/4339 ("TPU needs a rendezvous", merged)
Project: huggingface/transformers (src/transformers/trainer.py + modeling_utils.py, v2.9)
What hung: "When running on TPU, each ordinal needs to call `save_pretrained`. ... If we don't do it this way,
the trainer hangs when saving the model." `Trainer.save_model` ran `self._save(output_dir)` only under
`if self.is_world_master():` (on TPU `xm.is_master_ordinal(local=False)`), and `_save` calls
`self.model.save_pretrained`, which on an XLA device writes the weights with `xm.save` -- a rendezvous of
all ordinals (modeling_utils.py). The world master waited in that rendezvous while the other ordinals went
on to `xm.rendezvous("saving_optimizer_states")` in the training loop.
Fix (the PR, following the original TPU implementation of PR #3702): on TPU, `save_model` calls `_save_tpu`
on every ordinal -- directory and training args on the master, `xm.rendezvous("saving_checkpoint")`, then
`self.model.save_pretrained(output_dir)` on every ordinal; the world-master test remains for the non-TPU
path.
Expected rankcheck finding: RC101 on `self._save(output_dir)` under `if self.is_world_master():` at
hf_trainer/trainer.py:148 (save_model), a call that reaches `xm.save` in hf_trainer/modeling_utils.py.
Inferred: hf_trainer/ is a trimmed transformers 2.9 (Trainer, TrainingArguments, PreTrainedModel.save_pretrained);
the pre-fix save_model/_save and the TPU save_pretrained are from copies of that version, the training loop
is shortened (no gradient accumulation, logging or evaluation); the model is a small stand-in for GPT-2.
"""
import argparse

import torch
import torch_xla.distributed.xla_multiprocessing as xmp
from torch.utils.data import Dataset
from transformers import GPT2TokenizerFast

from hf_trainer import Trainer, TrainingArguments
from hf_trainer.modeling_small_gpt import SmallGPTConfig, SmallGPTLMHeadModel


class TextDataset(Dataset):
    def __init__(self, tokenizer, file_path, block_size=512):
        with open(file_path, encoding="utf-8") as f:
            ids = tokenizer(f.read())["input_ids"]
        self.examples = [ids[i : i + block_size] for i in range(0, len(ids) - block_size + 1, block_size)]

    def __len__(self):
        return len(self.examples)

    def __getitem__(self, i):
        return torch.tensor(self.examples[i], dtype=torch.long)


def collate(examples):
    input_ids = torch.stack(examples)
    return {"input_ids": input_ids, "labels": input_ids}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train_data_file", required=True)
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--block_size", type=int, default=512)
    parser.add_argument("--per_device_train_batch_size", type=int, default=8)
    parser.add_argument("--num_train_epochs", type=float, default=3.0)
    parser.add_argument("--save_steps", type=int, default=500)
    parser.add_argument("--save_total_limit", type=int, default=2)
    args = parser.parse_args()

    training_args = TrainingArguments(
        output_dir=args.output_dir,
        per_device_train_batch_size=args.per_device_train_batch_size,
        num_train_epochs=args.num_train_epochs,
        save_steps=args.save_steps,
        save_total_limit=args.save_total_limit,
    )
    tokenizer = GPT2TokenizerFast.from_pretrained("gpt2")
    model = SmallGPTLMHeadModel(SmallGPTConfig(vocab_size=tokenizer.vocab_size, n_positions=args.block_size))
    train_dataset = TextDataset(tokenizer, args.train_data_file, block_size=args.block_size)

    trainer = Trainer(model=model, args=training_args, data_collator=collate, train_dataset=train_dataset)
    trainer.train()
    trainer.save_model()
    # For convenience, we also re-save the tokenizer to the same directory,
    # so that you can share your model easily on huggingface.co/models =)
    if trainer.is_world_master():
        tokenizer.save_pretrained(training_args.output_dir)


def _mp_fn(index):
    # For xla_spawn (TPUs)
    main()


if __name__ == "__main__":
    xmp.spawn(_mp_fn, args=(), nprocs=8)
