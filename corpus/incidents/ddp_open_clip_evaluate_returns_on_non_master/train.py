"""open_clip-style train/evaluate functions. Evaluation is done by the master process: `evaluate`
returns at once on the other ranks, and the master then runs the zero-shot evaluation through the
DDP-wrapped model.

Thread: https://github.com/mlfoundations/open_clip/pull/1155 ("Hoist DDP unwrap to top of evaluate() so zero_shot_eval runs on bare module"; fixes #1152, follow-up to #1134 for #1121)
Project: mlfoundations/open_clip
What hung: "The `model = model.module` unwrap added in that PR is nested inside the
`if 'val' in data ...` branch, so `zero_shot_eval` (and the imagenet-val / imagenet-v2 blocks)
still run on a DDP-wrapped model on rank 0. With `if not is_master(args): return metrics` exiting
rank > 0 early, any DDP reducer activity inside `zero_shot_eval` can deadlock against the barrier
that #1134 added in `main.py` -- the same symptom #1121 reported."
Fix (the PR): "Unwrap once at the top of `evaluate()`, right after the master guard. Every eval path
then runs on the bare module."
Expected rankcheck finding: RC102 on the non-master `return metrics`: the master alone goes on to
the DDP forwards of the zero-shot evaluation.
"""
import logging

import torch
import torch.nn.functional as F

from distributed import is_master
from zero_shot import zero_shot_eval


def train_one_epoch(model, data, loss_fn, epoch, optimizer, scheduler, args):
    model.train()
    dataloader = data["train"].dataloader
    for i, (images, texts) in enumerate(dataloader):
        scheduler(epoch * len(dataloader) + i)
        images, texts = images.to(args.device), texts.to(args.device)
        out = model(image=images, text=texts)
        loss = loss_fn(out["image_features"], out["text_features"], out["logit_scale"])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def evaluate(model, data, epoch, args, tb_writer=None, tokenizer=None):
    metrics = {}
    if not is_master(args):
        return metrics  # expect: RC102
    model.eval()

    zero_shot_metrics = zero_shot_eval(model, data, epoch, args, tokenizer=tokenizer)
    metrics.update(zero_shot_metrics)

    if "val" in data and (args.val_frequency and ((epoch % args.val_frequency) == 0 or epoch == args.epochs)):
        eval_model = model.module if args.distributed else model
        total_loss, n = 0.0, 0
        with torch.no_grad():
            for images, texts in data["val"].dataloader:
                out = eval_model(image=images.to(args.device), text=texts.to(args.device))
                logits = out["logit_scale"] * out["image_features"] @ out["text_features"].t()
                labels = torch.arange(len(images), device=args.device)
                total_loss += ((F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2).item() * len(images)
                n += len(images)
        metrics["val_loss"] = total_loss / n
    logging.info(f"Eval Epoch: {epoch} " + "\t".join(f"{k}: {v:.4f}" for k, v in metrics.items()))
    if tb_writer is not None:
        for name, val in metrics.items():
            tb_writer.add_scalar(f"val/{name}", val, epoch)
    return metrics
