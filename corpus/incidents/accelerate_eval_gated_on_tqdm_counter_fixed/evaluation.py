"""Evaluation helper of a run_clm_no_trainer-style project: perplexity over the eval set, with the
per-batch losses gathered across processes."""
import math

import torch


def evaluate(accelerator, model, eval_dataloader, per_device_eval_batch_size):
    model.eval()
    losses = []
    for batch in eval_dataloader:
        with torch.no_grad():
            outputs = model(**batch)
        loss = outputs.loss
        losses.append(accelerator.gather_for_metrics(loss.repeat(per_device_eval_batch_size)))
    losses = torch.cat(losses)
    try:
        eval_loss = torch.mean(losses)
        perplexity = math.exp(eval_loss)
    except OverflowError:
        perplexity = float("inf")
    model.train()
    return eval_loss.item(), perplexity
