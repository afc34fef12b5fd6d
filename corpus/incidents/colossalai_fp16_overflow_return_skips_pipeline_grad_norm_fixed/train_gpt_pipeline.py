"""Safe twin of colossalai_fp16_overflow_return_skips_pipeline_grad_norm: FP16Optimizer.step no
longer returns on overflow before clipping, and clip_grad_norm_fp32 no longer returns early when a
stage has no gradients, so every pipeline stage joins the norm all_reduce on every step whatever
its overflow status (hpcaitech/ColossalAI#1175, merged).
"""
import argparse
import math
import runpy

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

from colossalai_lite.context import ParallelMode
from colossalai_lite.core import global_context as gpc
from colossalai_lite.initialize import initialize, launch_from_torch


class TokenDataset(Dataset):
    def __init__(self, path, seq_len):
        data = torch.load(path)
        n = (data.numel() - 1) // seq_len
        self.inputs = data[: n * seq_len].view(n, seq_len)
        self.labels = data[1 : n * seq_len + 1].view(n, seq_len)

    def __len__(self):
        return self.inputs.size(0)

    def __getitem__(self, i):
        return {"input_ids": self.inputs[i], "labels": self.labels[i]}


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        h = self.ln1(x)
        mask = torch.triu(torch.ones(x.size(1), x.size(1), device=x.device, dtype=torch.bool), 1)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class GPTStage(nn.Module):
    """One pipeline stage of GPT-2: the first holds the embeddings, the last the head."""

    def __init__(self, vocab, d, heads, layers, seq_len, first, last):
        super().__init__()
        self.first, self.last, self.d = first, last, d
        if first:
            self.wte = nn.Embedding(vocab, d)
            self.wpe = nn.Embedding(seq_len, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        if last:
            self.ln_f = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab, bias=False)

    def activation_shape(self, micro_inputs):
        return (micro_inputs.size(0), micro_inputs.size(1), self.d)

    def forward(self, x):
        if self.first:
            pos = torch.arange(x.size(1), device=x.device)
            x = self.wte(x) + self.wpe(pos)
        for blk in self.blocks:
            x = blk(x)
        if self.last:
            x = self.head(self.ln_f(x))
        return x


class GPTLMLoss(nn.Module):
    def forward(self, logits, labels):
        return nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)).float(), labels.reshape(-1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    parser.add_argument("--data", required=True)
    args = parser.parse_args()
    config = {k: v for k, v in runpy.run_path(args.config).items() if not k.startswith("__")}
    launch_from_torch(config)

    pp_size = gpc.get_world_size(ParallelMode.PIPELINE)
    pp_rank = gpc.get_local_rank(ParallelMode.PIPELINE)
    layers_per_stage = math.ceil(config["num_layers"] / pp_size)
    model = GPTStage(
        vocab=config["vocab_size"], d=config["hidden_size"], heads=config["num_heads"],
        layers=layers_per_stage, seq_len=config["seq_len"],
        first=pp_rank == 0, last=pp_rank == pp_size - 1,
    ).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=config["lr"], weight_decay=0.01)

    dataset = TokenDataset(args.data, config["seq_len"])
    sampler = DistributedSampler(
        dataset,
        num_replicas=gpc.get_world_size(ParallelMode.DATA),
        rank=gpc.get_local_rank(ParallelMode.DATA),
    )
    loader = DataLoader(dataset, batch_size=config["batch_size"], sampler=sampler, drop_last=True)
    engine, loader = initialize(model, optimizer, GPTLMLoss(), loader)

    step = 0
    for epoch in range(config["num_epochs"]):
        sampler.set_epoch(epoch)
        data_iter = iter(loader)
        engine.train()
        for _ in range(len(loader)):
            engine.zero_grad()
            loss = engine.execute_schedule(data_iter)
            updated, grad_norm = engine.step()
            step += 1
            if gpc.is_last_rank(ParallelMode.PIPELINE) and gpc.get_local_rank(ParallelMode.DATA) == 0 and step % 50 == 0:
                print(f"step {step} loss {loss.item():.4f} updated {updated} grad_norm {grad_norm}")


if __name__ == "__main__":
    main()
