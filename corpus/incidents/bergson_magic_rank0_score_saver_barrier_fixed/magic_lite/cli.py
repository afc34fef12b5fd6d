"""MAGIC: train with per-document weights, replay the run backwards to get d(query loss)/d(weight),
and write those metagradients as attribution scores.

Safe twin of bergson_magic_rank0_score_saver_barrier: the rank-0 save is unchanged, but the one-shot
score savers now build their writers with `distributed=False` (magic_lite/score_writer.py), so the
save issues no collective (EleutherAI/bergson#424).
"""
import argparse
import os
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from datasets import load_from_disk
from torch.distributed._functional_collectives import all_reduce as differentiable_all_reduce
from torch.distributed._functional_collectives import wait_tensor
from torch.func import functional_call
from transformers import AutoModelForCausalLM

from .distributed import launch_distributed_run
from .score_writer import save_sequence_scores, save_token_scores


def token_losses(model, params, input_ids, attention_mask):
    logits = functional_call(model, params, (input_ids,), {"attention_mask": attention_mask}).logits
    loss = F.cross_entropy(logits[:, :-1].flatten(0, 1), input_ids[:, 1:].flatten(), reduction="none")
    mask = attention_mask[:, 1:].float()
    return loss.view_as(mask), mask


def weighted_loss(model, params, input_ids, attention_mask, w):
    """`w` is one weight per document, or one per predicted token (per-token attribution)."""
    loss, mask = token_losses(model, params, input_ids, attention_mask)
    if w.ndim == 2:
        return ((w * loss * mask).sum(1) / mask.sum(1).clamp(min=1)).sum()
    return (w * (loss * mask).sum(1) / mask.sum(1).clamp(min=1)).sum()


def shard_batches(dataset, batch_size, rank, world_size):
    """Global batches of `batch_size` documents; each rank takes its contiguous slice."""
    per_rank = batch_size // world_size
    for start in range(0, len(dataset) - batch_size + 1, batch_size):
        lo = start + rank * per_rank
        idx = list(range(lo, lo + per_rank))
        rows = dataset.select(idx)
        yield torch.tensor(idx), torch.tensor(rows["input_ids"]), torch.tensor(rows["attention_mask"])


def save_magic_scores(run_path: str, scores: torch.Tensor, train_dataset, per_token: bool) -> str:
    """Write MAGIC scores as a score directory under ``<run_path>/scores``."""
    path = Path(run_path) / "scores"
    if not per_token:
        arr = scores.float().numpy()
        save_sequence_scores(path, arr if arr.ndim > 1 else arr[:, None])
        print(f"Saved attribution scores to {path}")
        return str(path)

    num_token_grads = np.asarray([max(int(sum(m)) - 1, 0) for m in train_dataset["attention_mask"]], dtype=np.int64)
    offsets = np.zeros(len(num_token_grads) + 1, dtype=np.int64)
    np.cumsum(num_token_grads, out=offsets[1:])
    grid = scores.float().numpy()
    flat = np.concatenate([grid[r, : num_token_grads[r]] for r in range(len(num_token_grads))])
    save_token_scores(path, flat, offsets)
    print(f"Saved attribution scores to {path}")
    return str(path)


def worker(global_rank, rank, world_size, train_path, query_path, args):
    torch.cuda.set_device(rank)
    device = torch.device("cuda", rank)
    dist.init_process_group("nccl", rank=global_rank, world_size=world_size)
    group = dist.distributed_c10d._get_default_group()

    train_ds = load_from_disk(train_path)
    query_ds = load_from_disk(query_path)
    model = AutoModelForCausalLM.from_pretrained(args.model).to(device)
    model.requires_grad_(False)

    params = {k: v.detach().clone().requires_grad_(True) for k, v in model.named_parameters()}
    seq_len = len(train_ds[0]["input_ids"])
    w_shape = (len(train_ds), seq_len - 1) if args.attribute_tokens else (len(train_ds),)
    weights = torch.ones(w_shape, device=device, requires_grad=True)

    # forward: differentiable SGD on the weighted loss, gradients summed across ranks
    for step, (idx, ids, mask) in enumerate(shard_batches(train_ds, args.batch_size, global_rank, world_size)):
        ids, mask, idx = ids.to(device), mask.to(device), idx.to(device)
        loss = weighted_loss(model, params, ids, mask, weights[idx]) / args.batch_size
        grads = torch.autograd.grad(loss, list(params.values()), create_graph=True)
        grads = [wait_tensor(differentiable_all_reduce(g, "sum", group)) for g in grads]
        params = {k: p - args.lr * g for (k, p), g in zip(params.items(), grads)}
        if global_rank == 0 and step % 10 == 0:
            print(f"step {step}: loss {loss.item():.4f}")

    # query loss at the final parameters, metagradient with respect to the document weights
    q_ids = torch.tensor(query_ds["input_ids"], device=device)
    q_mask = torch.tensor(query_ds["attention_mask"], device=device)
    q_loss, q_tok = token_losses(model, params, q_ids, q_mask)
    query_loss = ((q_loss * q_tok).sum(1) / q_tok.sum(1).clamp(min=1)).mean()
    weight_grads = torch.autograd.grad(query_loss, weights)[0]
    dist.all_reduce(weight_grads, op=dist.ReduceOp.SUM)
    scores = weight_grads.detach().cpu()

    if global_rank == 0:
        print(f"Baseline loss: {query_loss.item():.4f}")
        score_path = save_magic_scores(args.run_path, scores, train_ds, args.attribute_tokens)
        print(f"Scores in {score_path}")


def main():
    p = argparse.ArgumentParser(description="MAGIC attribution")
    p.add_argument("--model", required=True)
    p.add_argument("--train", required=True, help="tokenized dataset saved with save_to_disk")
    p.add_argument("--query", required=True)
    p.add_argument("--run_path", default="runs/magic")
    p.add_argument("--batch_size", type=int, default=16)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--attribute_tokens", action="store_true")
    p.add_argument("--nproc_per_node", type=int, default=max(torch.cuda.device_count(), 1))
    args = p.parse_args()
    os.makedirs(args.run_path, exist_ok=True)
    launch_distributed_run(worker, (args.train, args.query, args), args.nproc_per_node)


if __name__ == "__main__":
    main()
