"""The Lightning FSDP pretraining module of pytorch#101294 after the fix: every rank enters
`FSDP.summon_full_params` (with `rank0_only=True`), and only rank 0 computes and logs the norms.

Thread: https://github.com/pytorch/pytorch/issues/101294 ("Docs suggestion
`FullyShardedDataParallel.summon_full_params` must be called on all ranks/processes"), filed by the
reporter of https://github.com/Lightning-AI/pytorch-lightning/issues/17600
("FullyShardedDataParallel.summon_full_params context manger hangs in on_before_optimizer_step")
Project: Lightning (FSDPStrategy) over torch.distributed.fsdp
What hung: the reporter's own finding, confirmed by the FSDP maintainer: "I think I was lead astray
by the `rank0_only` argument, thinking that I'd get what I need only calling the context manager
on the rank 0 process, but instead things hang (at least with `with_grads=True`). I am guessing
under the hood all_gather is being called". Rank 0 entered `summon_full_params`, which all-gathers
every flat parameter (and its gradient) from all ranks, while the other ranks went on to the
optimizer step and the next forward; the maintainer (awgu) agreed the docs should say so.
Fix: the context manager is entered on every rank (`rank0_only=True` still keeps the full tensors
on rank 0 only) and only the norm computation and the logging are left to rank 0.
Expected rankcheck finding: none (safe twin).
(Inferred: how the reporter restricted the call to rank 0 is not shown in the stored threads;
Lightning's own `rank_zero_only` decorator, which the Lightning docs recommend for rank-0 logging,
is used here. The model and data module are the project-agnostic parts of a Lightning LM recipe.)
"""
import argparse
import math

import lightning.pytorch as pl
import torch
import torch.nn as nn
from lightning.pytorch.strategies import FSDPStrategy
from lightning.pytorch.utilities import rank_zero_only
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.utils.data import DataLoader, Dataset


class TokenBlocks(Dataset):
    def __init__(self, path, block_size):
        self.tokens = torch.load(path)
        self.block_size = block_size

    def __len__(self):
        return (len(self.tokens) - 1) // self.block_size

    def __getitem__(self, idx):
        start = idx * self.block_size
        chunk = self.tokens[start : start + self.block_size + 1]
        return chunk[:-1], chunk[1:]


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x, mask):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class GPTModule(pl.LightningModule):
    def __init__(self, vocab_size=50304, dim=1024, heads=16, layers=24, lr=3e-4, grad_log_every=50):
        super().__init__()
        self.save_hyperparameters()
        self.embed = nn.Embedding(vocab_size, dim)
        self.blocks = nn.ModuleList([Block(dim, heads) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab_size, bias=False)

    def forward(self, idx):
        t = idx.shape[1]
        mask = torch.triu(torch.full((t, t), float("-inf"), device=idx.device), diagonal=1)
        x = self.embed(idx)
        for block in self.blocks:
            x = block(x, mask)
        return self.head(self.ln_f(x))

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
        self.log("train_loss", loss, prog_bar=True, sync_dist=True)
        return loss

    def on_before_optimizer_step(self, optimizer):
        if self.global_step % self.hparams.grad_log_every == 0:
            self.log_full_grad_norms()

    def log_full_grad_norms(self):
        fsdp_model = self.trainer.strategy.model
        norms = {}
        with FSDP.summon_full_params(fsdp_model, writeback=False, rank0_only=True, with_grads=True):
            if self.trainer.is_global_zero:
                for i, block in enumerate(self.blocks):
                    sq = sum(p.grad.float().pow(2).sum().item() for p in block.parameters() if p.grad is not None)
                    norms[f"grad_norm/block_{i}"] = math.sqrt(sq)
        self._write_norms(norms)

    @rank_zero_only
    def _write_norms(self, norms):
        self.logger.log_metrics(norms, step=self.global_step)

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr, betas=(0.9, 0.95), weight_decay=0.1)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=self.trainer.max_steps)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train-tokens", default="data/train_tokens.pt")
    parser.add_argument("--block-size", type=int, default=1024)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--max-steps", type=int, default=20000)
    parser.add_argument("--devices", type=int, default=8)
    args = parser.parse_args()

    loader = DataLoader(TokenBlocks(args.train_tokens, args.block_size), batch_size=args.batch_size, shuffle=True)
    model = GPTModule()
    strategy = FSDPStrategy(auto_wrap_policy={Block}, use_orig_params=True)
    trainer = pl.Trainer(
        accelerator="gpu",
        devices=args.devices,
        strategy=strategy,
        precision="bf16-mixed",
        max_steps=args.max_steps,
        log_every_n_steps=10,
    )
    trainer.fit(model, loader)


if __name__ == "__main__":
    main()
