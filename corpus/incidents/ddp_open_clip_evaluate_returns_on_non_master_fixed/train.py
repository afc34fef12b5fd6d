"""Safe twin of ddp_open_clip_evaluate_returns_on_non_master: as in open_clip#1155, `evaluate`
unwraps DDP right after the master guard, so every evaluation path on the master runs on the bare
module and issues no collective the other ranks would have to join.

Thread: https://github.com/mlfoundations/open_clip/pull/1155
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
        return metrics
    if args.distributed and hasattr(model, "module"):
        model = model.module
    model.eval()

    zero_shot_metrics = zero_shot_eval(model, data, epoch, args, tokenizer=tokenizer)
    metrics.update(zero_shot_metrics)

    if "val" in data and (args.val_frequency and ((epoch % args.val_frequency) == 0 or epoch == args.epochs)):
        eval_model = model
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
