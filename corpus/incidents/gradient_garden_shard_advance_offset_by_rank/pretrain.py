"""gradient-garden pretraining stage: a GPT-style decoder trained from pre-tokenized `.npy` shards
with DDP (`torchrun --nproc_per_node=8 pretrain.py --data-root data/fineweb ...`). Each step every
rank asks the shard loader (dataloaders.py) for its slice of the global batch, runs the DDP forward
and backward (the gradient all-reduce) and steps the optimizer; validation runs every
`--eval-every` steps on the `val` shards.

Thread: https://github.com/ruimalheiro/gradient-garden/pull/20 ("validate shard size in
pretraining to prevent lock in DDP"); the root cause was fixed by the author in commit 40f40f2
("Fix pretraining dataloader shard divergence bug (DDP)")
Project: ruimalheiro/gradient-garden (an LLM training playground)
What hung: the PR, by the author: it "Prevents a 'lock/hang' that would happen if one of the ranks
gets a shard that is too small for the configured batch size, sequence length and world size.
Problem doesn't seem to be noticeable in 1GPU." In `next_batch` each rank's `current_position`
starts at `B*S*rank`, and the test that moves to the next shard compares that per-rank position
with the shard length, so a higher rank leaves a shard one step before rank 0 does (on a shard
smaller than one global batch, at once). When a rank wraps to shard 0 it calls
`sync_shuffle_shards()`, whose `broadcast_object_list` the other ranks do not issue on that step:
they are in the DDP gradient all-reduce of the next backward.
Fix: PR #20 rejects shards smaller than one global batch up front; commit 40f40f2 then made the
position global (the same on every rank, each rank slicing at `position + B*S*rank`), so the
shard-advance test, and the reshuffle broadcast under it, are taken on the same step everywhere.
Expected rankcheck finding: RC101 on the `self.sync_shuffle_shards()` call in `next_batch`
(dataloaders.py), reached under a test of this rank's own position.
(Trimmed: the model is a plain decoder instead of the project's configurable one; the instruct
loader, the recipes' YAML configuration, hellaswag evals and checkpointing are left out.)
"""
import argparse
import math
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from dataloaders import PretrainingDataLoader
from logger import logger


class Decoder(nn.Module):
    def __init__(self, vocab_size, dim, layers, heads, max_len):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, dim)
        self.pos = nn.Embedding(max_len, dim)
        layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab_size, bias=False)

    def forward(self, idx, targets):
        t = idx.shape[1]
        mask = nn.Transformer.generate_square_subsequent_mask(t, device=idx.device)
        x = self.tok(idx) + self.pos(torch.arange(t, device=idx.device))
        logits = self.head(self.norm(self.blocks(x, mask=mask, is_causal=True)))
        return nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data-root", default="data/fineweb")
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--seq-len", type=int, default=1024)
    p.add_argument("--grad-accum", type=int, default=4)
    p.add_argument("--max-steps", type=int, default=20000)
    p.add_argument("--eval-every", type=int, default=250)
    p.add_argument("--eval-steps", type=int, default=20)
    p.add_argument("--lr", type=float, default=6e-4)
    p.add_argument("--shuffle-shards", action="store_true")
    return p.parse_args()


def lr_at(step, args, warmup=700):
    if step < warmup:
        return args.lr * (step + 1) / warmup
    progress = (step - warmup) / max(1, args.max_steps - warmup)
    return 0.1 * args.lr + 0.45 * args.lr * (1 + math.cos(math.pi * progress))


def main():
    args = parse_args()
    dist.init_process_group(backend="nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    master = rank == 0

    train_loader = PretrainingDataLoader(args.batch_size, args.seq_len, master, rank, world, args.data_root, "train",
                                         use_shuffle=args.shuffle_shards)
    val_loader = PretrainingDataLoader(args.batch_size, args.seq_len, master, rank, world, args.data_root, "val")

    model = Decoder(50304, 768, 12, 12, args.seq_len).to(device)
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1)

    for step in range(args.max_steps):
        if step % args.eval_every == 0:
            model.eval()
            val_loader.reset()
            val_loss = torch.zeros((), device=device)
            with torch.no_grad():
                for _ in range(args.eval_steps):
                    x, y = val_loader.next_batch()
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        val_loss += model(x.to(device), y.to(device)) / args.eval_steps
            dist.all_reduce(val_loss, op=dist.ReduceOp.AVG)
            if master:
                logger.info(f"step {step} val_loss {val_loss.item():.4f}")
            model.train()

        optimizer.zero_grad(set_to_none=True)
        loss_accum = torch.zeros((), device=device)
        for micro in range(args.grad_accum):
            x, y = train_loader.next_batch()
            model.require_backward_grad_sync = micro == args.grad_accum - 1
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(x.to(device), y.to(device)) / args.grad_accum
            loss_accum += loss.detach()
            loss.backward()
        dist.all_reduce(loss_accum, op=dist.ReduceOp.AVG)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step, args)
        optimizer.step()
        if master and step % 10 == 0:
            logger.info(f"step {step} loss {loss_accum.item():.4f}")

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
