"""Causal-LM fine-tuning with Accelerate on two GPUs (DDP), with a periodic validation pass.
The script skips any training batch that contains padding, so that only full-length packed
sequences are trained on.

Thread: https://github.com/huggingface/accelerate/issues/3212 ("Timeout at validation step")
Project: huggingface/accelerate
What hung: the padding test `(batch["attention_mask"] == 0).any()` is evaluated on each
process's own batch. When one GPU draws a padded batch and the other does not, the first
process `continue`s past forward/backward while the second enters backward and waits in DDP's
gradient all-reduce (the watchdog log shows an ALLREDUCE of 525M elements timing out after
600 s, just as the progress bar reaches the validation step).
Fix (the reporter's own, posted in the thread): gather the per-process flag with
`accelerator.gather` and skip the batch on every process when any of them saw padding.
Expected rankcheck finding: RC103 on the per-rank `continue`.
Inferred: the model/tokenizer setup, the optimizer and the evaluation cadence; the thread
shows only the skip test, the fix and the timeout log.
"""
import argparse
import math

import torch
from accelerate import Accelerator
from datasets import load_from_disk
from torch.utils.data import DataLoader
from tqdm.auto import tqdm
from transformers import AutoModelForCausalLM, AutoTokenizer, DataCollatorForLanguageModeling, get_cosine_schedule_with_warmup


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model_name_or_path", default="meta-llama/Llama-2-7b-hf")
    p.add_argument("--dataset_dir", default="data/tokenized")
    p.add_argument("--per_device_batch_size", type=int, default=4)
    p.add_argument("--lr", type=float, default=2e-5)
    p.add_argument("--num_epochs", type=int, default=1)
    p.add_argument("--eval_every", type=int, default=500)
    return p.parse_args()


@torch.no_grad()
def evaluate(model, eval_dl, accelerator):
    model.eval()
    losses = []
    for batch in tqdm(eval_dl, disable=not accelerator.is_local_main_process):
        out = model(**batch)
        losses.append(accelerator.gather_for_metrics(out.loss.repeat(batch["input_ids"].shape[0])))
    model.train()
    loss = torch.cat(losses).mean()
    return loss.item(), math.exp(min(loss.item(), 20))


def main():
    args = parse_args()
    accelerator = Accelerator(gradient_accumulation_steps=1)
    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path)
    tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path, torch_dtype=torch.bfloat16)
    model.gradient_checkpointing_enable()

    ds = load_from_disk(args.dataset_dir)
    collator = DataCollatorForLanguageModeling(tokenizer, mlm=False)
    train_dl = DataLoader(ds["train"], batch_size=args.per_device_batch_size, shuffle=True, collate_fn=collator)
    eval_dl = DataLoader(ds["validation"], batch_size=args.per_device_batch_size, collate_fn=collator)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    scheduler = get_cosine_schedule_with_warmup(optimizer, 100, len(train_dl) * args.num_epochs)
    model, optimizer, train_dl, eval_dl, scheduler = accelerator.prepare(model, optimizer, train_dl, eval_dl, scheduler)

    step = 0
    model.train()
    for epoch in range(args.num_epochs):
        for batch in tqdm(train_dl, disable=not accelerator.is_local_main_process):
            if (batch["attention_mask"] == 0).any():
                print("Skipping batch due to presence of padding.")
                continue  # expect: RC103
            with accelerator.accumulate(model):
                outputs = model(**batch)
                accelerator.backward(outputs.loss)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
            step += 1
            if step % args.eval_every == 0:
                eval_loss, ppl = evaluate(model, eval_dl, accelerator)
                accelerator.print(f"epoch {epoch} step {step}: eval_loss {eval_loss:.4f} ppl {ppl:.2f}")

    accelerator.wait_for_everyone()
    accelerator.unwrap_model(model).save_pretrained("out", save_function=accelerator.save,
                                                    is_main_process=accelerator.is_main_process)


if __name__ == "__main__":
    main()
