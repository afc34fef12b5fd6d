"""Language-model fine-tuning on a TPU v3-8 with the transformers Trainer, checkpointing every
`--save_steps` steps and at the end -- safe twin.

Thread: https://github.com/huggingface/transformers/pull/4339 ("TPU needs a rendezvous", merged)
Same program as transformers_tpu_save_model_on_world_master_only with the PR's fix in hf_trainer/trainer.py:
on TPU, save_model goes through _save_tpu on every ordinal (`xm.rendezvous("saving_checkpoint")`, then
`self.model.save_pretrained`, whose `xm.save` every ordinal now reaches); the world-master test is kept for
the GPU/CPU path only.
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
