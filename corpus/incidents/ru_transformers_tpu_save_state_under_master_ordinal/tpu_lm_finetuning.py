"""Fine-tuning GPT-2 on a Russian text corpus on a TPU v3-8 with PyTorch/XLA (one process per core,
started by `xmp.spawn`), saving checkpoints every `--save_steps` optimizer steps.

Thread: https://github.com/mgrankin/ru_transformers/issues/28 ("Saving the model freezes the TPU when
using the latest torch_xla package and provided tpu_lm_finetuning script", closed)
Project: mgrankin/ru_transformers (tpu_lm_finetuning.py at 766343f), PyTorch/XLA
What hung: the reporter: the save call "freezes the TPU due to [the] rendezvous in xm.save(...) function.
In tpu_lm_finetuning.py, however, the function is called only when xm.is_master_ordinal() so the rendezvous
point is never reached." `save_state` runs `save_dir(...)` (-> save_pretrained -> `xm.save`) inside
`if xm.is_master_ordinal():`; the master ordinal waits in xm.save's rendezvous while the other seven cores
go back to training. The maintainer agreed the script predates the rendezvous in xm.save (and asked for a
PR); the PyTorch/XLA maintainers give the same remedy in pytorch/xla#2712 and #2789: call `xm.save` on every
core, it already writes from the master only.
Fix (the thread's remedy, no commit in the repository): call the save on every ordinal and keep only the
file-system side effects (directories, tokenizer, args, step file, checkpoint rotation) under
`xm.is_master_ordinal()`.
Expected rankcheck finding: RC101 on both `save_dir(...)` calls (lines 93, 96) under `if xm.is_master_ordinal():`
in save_state -- each reaches `xm.save` (a rendezvous of all ordinals) in tpu_utils.save_pretrained.
Inferred: log_info/save_pretrained are moved from the script into tpu_utils.py for this reconstruction
(in the repository they sit in tpu_lm_finetuning.py); the SentencePiece/YouTokenToMe tokenizers, fp16
conversion, layer freezing, file lock and the KeyboardInterrupt save are left out; the dataset is reduced
to a token-block dataset.
"""
import argparse
import glob
import os
import random
import re
import shutil

import numpy as np
import torch
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_multiprocessing as xmp
from torch.utils.data import DataLoader, Dataset, RandomSampler
from torch.utils.data.distributed import DistributedSampler
from tqdm import tqdm, trange
from transformers import AdamW, GPT2LMHeadModel, GPT2TokenizerFast, get_linear_schedule_with_warmup

from tpu_utils import log_info, save_pretrained


class TextDataset(Dataset):
    def __init__(self, tokenizer, file_path, block_size=1024):
        with open(file_path, encoding="utf-8") as f:
            text = f.read()
        ids = tokenizer(text)["input_ids"]
        self.examples = [ids[i : i + block_size] for i in range(0, len(ids) - block_size + 1, block_size)]

    def __len__(self):
        return len(self.examples)

    def __getitem__(self, item):
        return torch.tensor(self.examples[item])


def set_seed(args):
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)


def _rotate_checkpoints(args, checkpoint_prefix):
    if not args.save_total_limit or args.save_total_limit <= 0:
        return
    glob_checkpoints = glob.glob(os.path.join(args.output_dir, f"{checkpoint_prefix}-*"))
    if len(glob_checkpoints) <= args.save_total_limit:
        return
    ordering = []
    for path in glob_checkpoints:
        match = re.match(f".*{checkpoint_prefix}-([0-9]+)", path)
        if match and match.groups():
            ordering.append((int(match.groups()[0]), path))
    checkpoints_sorted = [path for _, path in sorted(ordering)]
    for checkpoint in checkpoints_sorted[: len(checkpoints_sorted) - args.save_total_limit]:
        log_info(f"Deleting older checkpoint [{checkpoint}] due to args.save_total_limit")
        shutil.rmtree(checkpoint)


def save_state(args, model, tokenizer, global_step):
    def save_dir(output_dir):
        os.makedirs(output_dir, exist_ok=True)
        log_info(f"Saving model checkpoint to {output_dir}")
        save_pretrained(model, output_dir)
        tokenizer.save_pretrained(output_dir)
        # Good practice: save your training arguments together with the trained model
        torch.save(args, os.path.join(output_dir, "training_args.bin"))
        with open(os.path.join(output_dir, "step.txt"), "w") as c:
            c.write(str(global_step))

    if xm.is_master_ordinal():
        save_dir(args.output_dir)  # expect: RC101
        checkpoint_prefix = "checkpoint"
        output_dir = os.path.join(args.output_dir, f"{checkpoint_prefix}-{global_step}")
        save_dir(output_dir)  # expect: RC101
        _rotate_checkpoints(args, checkpoint_prefix)


def build_dataloader(args, tokenizer):
    train_dataset = TextDataset(tokenizer, args.train_data_file, block_size=args.block_size)
    train_sampler = RandomSampler(train_dataset)
    if xm.xrt_world_size() > 1:
        train_sampler = DistributedSampler(
            train_dataset, num_replicas=xm.xrt_world_size(), rank=xm.get_ordinal(), shuffle=True
        )
    return DataLoader(train_dataset, sampler=train_sampler, batch_size=args.per_gpu_train_batch_size)


def train(args, model, tokenizer):
    train_dataloader = build_dataloader(args, tokenizer)
    t_total = len(train_dataloader) // args.gradient_accumulation_steps * args.num_train_epochs

    no_decay = ["bias", "LayerNorm.weight"]
    optimizer_grouped_parameters = [
        {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)], "weight_decay": args.weight_decay},
        {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)], "weight_decay": 0.0},
    ]
    optimizer = AdamW(optimizer_grouped_parameters, lr=args.learning_rate, eps=args.adam_epsilon)
    warmup_steps = args.warmup_samples // (args.per_gpu_train_batch_size * xm.xrt_world_size())
    scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=warmup_steps, num_training_steps=t_total)

    log_info("***** Running training *****")
    log_info("  Num Epochs = %d", args.num_train_epochs)
    log_info("  Total optimization steps = %d", t_total)

    global_step = 0
    train_iterator = trange(int(args.num_train_epochs), desc="Epoch", disable=not xm.is_master_ordinal())
    for epoch in train_iterator:
        p_train_dataloader = pl.ParallelLoader(train_dataloader, [args.device])
        epoch_iterator = tqdm(
            p_train_dataloader.per_device_loader(args.device),
            total=len(train_dataloader),
            desc="Iteration",
            disable=not xm.is_master_ordinal(),
        )
        model.train()
        for step, batch in enumerate(epoch_iterator):
            optimizer.zero_grad()
            outputs = model(batch, labels=batch)
            loss = outputs[0]
            if args.gradient_accumulation_steps > 1:
                loss = loss / args.gradient_accumulation_steps
            loss.backward()
            if (step + 1) % args.gradient_accumulation_steps == 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
                xm.optimizer_step(optimizer, barrier=True)
                scheduler.step()
                global_step += 1

                if args.logging_steps > 0 and global_step % args.logging_steps == 0:
                    # call on every ordinal and log in one: .item() on one ordinal only hangs
                    ls = loss.item()
                    log_info(f"step {global_step}: loss {ls:.4f}, lr {scheduler.get_last_lr()[0]:.2e}")

                if args.save_steps > 0 and global_step % args.save_steps == 0:
                    save_state(args, model, tokenizer, global_step)

    save_state(args, model, tokenizer, global_step)
    return global_step


def main(index):
    parser = argparse.ArgumentParser()
    parser.add_argument("--train_data_file", required=True)
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--model_name_or_path", default="gpt2")
    parser.add_argument("--block_size", type=int, default=1024)
    parser.add_argument("--per_gpu_train_batch_size", type=int, default=4)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--learning_rate", type=float, default=5e-5)
    parser.add_argument("--weight_decay", type=float, default=0.0)
    parser.add_argument("--adam_epsilon", type=float, default=1e-8)
    parser.add_argument("--max_grad_norm", type=float, default=1.0)
    parser.add_argument("--num_train_epochs", type=float, default=1.0)
    parser.add_argument("--warmup_samples", type=int, default=0)
    parser.add_argument("--logging_steps", type=int, default=50)
    parser.add_argument("--save_steps", type=int, default=50)
    parser.add_argument("--save_total_limit", type=int, default=None)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    args.local_rank = index
    args.device = xm.xla_device()

    # the same seed everywhere: every core must build the same dataset
    set_seed(args)

    tokenizer = GPT2TokenizerFast.from_pretrained(args.model_name_or_path)
    model = GPT2LMHeadModel.from_pretrained(args.model_name_or_path)
    model = model.to(args.device)
    model.tie_weights()

    train(args, model, tokenizer)


if __name__ == "__main__":
    xmp.spawn(main)
