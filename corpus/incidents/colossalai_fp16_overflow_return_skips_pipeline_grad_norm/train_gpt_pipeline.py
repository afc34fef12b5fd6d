"""GPT-2 pre-training with ColossalAI: a 2-stage pipeline over 8 GPUs (4 data-parallel replicas),
naive fp16 mixed precision with a dynamic loss scale, and gradient clipping, launched with
`torchrun --nproc_per_node 8 train_gpt_pipeline.py --config gpt2_pp2.py`.

Thread: https://github.com/hpcaitech/ColossalAI/pull/1175 ("[hotfix]different overflow status
lead to communication stuck.", merged as e276453)
Project: hpcaitech/ColossalAI (colossalai/amp/naive_amp/_fp16_optimizer.py,
colossalai/utils/common.py)
What hung: FP16Optimizer.step checks the unscaled gradients for inf/nan and, on overflow, zeroes
the gradients and returns `(False, None)` before clipping. With pipeline parallelism each stage
holds a different part of the model, so one stage can overflow while the other does not (the flag
is reduced over the data-parallel group only: the "model-parallel" lookup in the constructor also
returns the data-parallel group). The stage that did not overflow goes on to
`clip_grad_norm_fp32`, whose partial norms are summed with an all_reduce over the pipeline group,
and waits there for the stage that returned early. In the review thread the author explains:
"Different pipeline ranks may have different overflow status, if the overflow do not join the
clip grad norm, the all reduce process will be stuck."
Fix (the PR): on overflow the optimizer still zeroes the gradients but no longer returns; it
always runs `clip_grad_norm` and only skips the optimizer step and the fp16 copy-back, and
`clip_grad_norm_fp32` no longer returns 0.0 early when no parameter has a gradient (an overflowed
stage has just set them all to None), so it joins the pipeline all_reduce with a zero norm.
Expected rankcheck findings: RC102 on the `return False, None` under `if overflow:` in
FP16Optimizer.step (colossalai_lite/amp/naive_amp/_fp16_optimizer.py), and RC102 on the
`return 0.0` for an empty gradient list in clip_grad_norm_fp32 (colossalai_lite/utils/common.py),
both exits taken per rank before the pipeline all_reduce.
Inferred: the 1F1B schedule, tensor parallelism and the DDP gradient all-reduce inside each stage
are left out; the stage split and the config are written for this reconstruction.
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
