"""Fine-tuning GPT-2 on DailyDialog-style conversations with torch.distributed.launch: one process
per GPU, the model wrapped in DistributedDataParallel, accuracy and loss averaged across processes
for logging with an explicit all_reduce.

Thread: https://github.com/bme-chatbots/dialogue-generation/issues/14 ("Recovering from distributed
training OOM error", opened by the maintainer, closed)
Project: bme-chatbots/dialogue-generation (src/train.py)
What hung: "during distributed training the loop will enter a deadlock upon any kind of exception
(typically OOM error)". The training loop wraps each step in `try/except RuntimeError`; when one
process runs out of memory it swallows the error, counts a skipped batch and runs a small dummy
batch through `forward_step` + `backward` "to bring the workers in sync". The other processes are
in the middle of the real step (accuracy all_reduce, DDP gradient all-reduce in backward, loss
all_reduce), so the OOM process's dummy-step collectives pair with the wrong calls of its peers and
the ranks drift apart until one side waits in a collective the other never issues.
Fix (maintainer, commits 72c767a / d99be11 on the next day, the second option of the issue:
"compute the largest batch size ... before training and raise an error if an OOM is raised"): a
dummy batch of the maximal size is run once before training so a too-large configuration fails up
front, and in the training loop an OOM is only skipped when not distributed -- under DDP it is
re-raised, so the launcher tears every process down.
Expected rankcheck finding: RC105 on the `except RuntimeError` of the training loop, a handler for
an error raised on one process that swallows it and then issues collectives (forward_step's
all_reduce, the DDP backward) the other processes do not issue at that point.
Inferred: the dataset reader, the collate function, the model size flags and the evaluation cadence
are written for this reconstruction; the repository's per-rank NaN skip and patience counter are
left out so that the case isolates the OOM handler of the thread.
"""
import argparse
import json
import math
import os
from statistics import mean

import torch
import torch.distributed as dist
from torch.nn.functional import log_softmax, nll_loss
from torch.nn.parallel import DistributedDataParallel
from torch.nn.utils import clip_grad_norm_
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
from transformers import GPT2LMHeadModel, GPT2Tokenizer


def setup_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_dir", default="data/dailydialog")
    parser.add_argument("--model_dir", default="runs/gpt2-dailydialog")
    parser.add_argument("--model", default="gpt2")
    parser.add_argument("--max_epochs", type=int, default=15)
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--max_len", type=int, default=256)
    parser.add_argument("--learning_rate", type=float, default=1e-4)
    parser.add_argument("--grad_accum_steps", type=int, default=4)
    parser.add_argument("--eval_every_step", type=int, default=2000)
    parser.add_argument("--local_rank", type=int, default=-1)
    return parser.parse_args()


class DialogDataset(Dataset):
    """Each line of the jsonl file is one dialogue: a list of utterances."""

    def __init__(self, path, tokenizer, max_len):
        self.examples = []
        with open(path) as fh:
            for line in fh:
                turns = json.loads(line)["turns"]
                ids = []
                for turn in turns:
                    ids.extend(tokenizer.encode(turn) + [tokenizer.eos_token_id])
                self.examples.append(ids[-max_len:])

    def __len__(self):
        return len(self.examples)

    def __getitem__(self, idx):
        return self.examples[idx]


def make_collate(pad_idx):
    def collate(batch):
        longest = max(len(ex) for ex in batch)
        inputs = torch.full((len(batch), longest), pad_idx, dtype=torch.long)
        for i, ex in enumerate(batch):
            inputs[i, : len(ex)] = torch.tensor(ex)
        targets = inputs.clone()
        targets[:, :-1] = inputs[:, 1:]
        targets[:, -1] = pad_idx
        return inputs, targets

    return collate


def create_dummy_batch(args, pad_idx, batch_size):
    # a tiny batch used to "catch up" with the other workers after an OOM
    inputs = torch.full((batch_size, 8), pad_idx, dtype=torch.long)
    inputs[:, 0] = 0
    return inputs, inputs.clone()


def compute_loss(logits, targets, ignore_idx):
    logits_view = logits.view(-1, logits.size(-1))
    targets_view = targets.view(-1)
    log_probs = log_softmax(logits_view, dim=-1)
    loss = nll_loss(log_probs, targets_view, ignore_index=ignore_idx, reduction="sum")
    preds = log_probs.argmax(dim=-1)
    not_ignore = targets_view.ne(ignore_idx)
    num_targets = max(not_ignore.long().sum().item(), 1)
    correct = ((targets_view == preds) & not_ignore).float().sum()
    return loss / num_targets, correct / num_targets


def main():
    args = setup_args()
    master_process = args.local_rank in (-1, 0)
    args.distributed = args.local_rank != -1

    if args.distributed:
        torch.cuda.set_device(args.local_rank)
        device = torch.device("cuda", args.local_rank)
        dist.init_process_group(backend="nccl", init_method="env://")
    else:
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    world_size = int(os.environ.get("WORLD_SIZE", 1))

    tokenizer = GPT2Tokenizer.from_pretrained(args.model)
    tokenizer.pad_token = tokenizer.eos_token
    pad_idx = tokenizer.pad_token_id

    train_set = DialogDataset(os.path.join(args.data_dir, "train.jsonl"), tokenizer, args.max_len)
    valid_set = DialogDataset(os.path.join(args.data_dir, "valid.jsonl"), tokenizer, args.max_len)
    train_sampler = DistributedSampler(train_set) if args.distributed else None
    valid_sampler = DistributedSampler(valid_set, shuffle=False) if args.distributed else None
    collate = make_collate(pad_idx)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=train_sampler,
                              shuffle=train_sampler is None, collate_fn=collate)
    valid_loader = DataLoader(valid_set, batch_size=args.batch_size, sampler=valid_sampler,
                              collate_fn=collate)

    model = GPT2LMHeadModel.from_pretrained(args.model).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, weight_decay=1e-6)
    if args.distributed:
        model = DistributedDataParallel(model, device_ids=[args.local_rank], output_device=args.local_rank)

    os.makedirs(args.model_dir, exist_ok=True)
    step, skip = 0, 0
    best_val_loss = math.inf

    def reduce_tensor(tensor):
        reduced = tensor.clone()
        dist.all_reduce(reduced, op=dist.ReduceOp.SUM)
        return reduced / world_size

    def forward_step(batch):
        inputs, targets = batch
        inputs, targets = inputs.to(device), targets.to(device)
        logits = model(input_ids=inputs).logits
        loss, accuracy = compute_loss(logits, targets, pad_idx)
        if args.distributed:
            # averaged across devices for more accurate logging
            accuracy = reduce_tensor(accuracy)
        return loss, accuracy.item()

    def train_step(batch):
        loss, accuracy = forward_step(batch)
        (loss / args.grad_accum_steps).backward()
        clip_grad_norm_(model.parameters(), 1.0)
        if (step + 1) % args.grad_accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
        if args.distributed:
            loss = reduce_tensor(loss.detach())
        return loss.item(), accuracy

    def evaluate():
        model.eval()
        losses = []
        with torch.no_grad():
            for batch in valid_loader:
                loss, _ = forward_step(batch)
                if args.distributed:
                    loss = reduce_tensor(loss)
                losses.append(loss.item())
        model.train()
        return mean(losses)

    def save_state():
        module = model.module if args.distributed else model
        torch.save({"model": module.state_dict(), "optimizer": optimizer.state_dict(), "step": step,
                    "val_loss": best_val_loss}, os.path.join(args.model_dir, "model.pt"))

    model.train()
    for epoch in range(args.max_epochs):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        train_losses = []
        for batch in train_loader:
            try:
                loss, accuracy = train_step(batch)
                step += 1
                train_losses.append(loss)
                if master_process and step % 100 == 0:
                    print(f"step {step} loss {loss:.4f} acc {accuracy:.4f} skipped {skip}")

                if step % args.eval_every_step == 0:
                    val_loss = evaluate()
                    if master_process:
                        print(f"step {step} val loss {val_loss:.4f}")
                    if val_loss < best_val_loss:
                        best_val_loss = val_loss
                        if master_process:
                            save_state()

            except RuntimeError as e:  # expect: RC105
                if "out of memory" not in str(e):
                    raise
                if master_process:
                    print("skipping step (oom)")
                skip += 1
                optimizer.zero_grad()
                torch.cuda.empty_cache()
                # performing a dummy forward/backward pass to bring the workers in sync
                dummy_batch = create_dummy_batch(args, pad_idx, batch_size=2)
                dummy_loss, _ = forward_step(dummy_batch)
                dummy_loss.backward()
                optimizer.zero_grad()

        if master_process and train_losses:
            print(f"epoch {epoch} train loss {mean(train_losses):.4f}")

    if args.distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
