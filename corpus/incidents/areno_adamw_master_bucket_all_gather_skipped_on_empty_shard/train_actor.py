"""Actor-critic policy training step (AReno CUDA engine) with the sharded FP32-master AdamW in
`offload="disk"` mode: after every micro-batch backward the bucket gradients are reduce-scattered
into the per-rank shards, and `optimizer.step()` updates each rank's shard of every bucket that
received a gradient and all-gathers the updated BF16 shards back into the model.

Thread: https://github.com/inclusionAI/AReno/pull/512 ("fix(cuda): avoid optimizer hangs and
non-disk slowdown", merged)
Project: inclusionAI/AReno (areno/engine/optim/adamw_fp32_master.py, after the shard-streaming
change of #498)
What hung: "Prevent DP optimizer all-gather hangs when a rank owns a zero-length shard ... The bucket
all-gather was conditional on rank-local updated references. A rank with a zero-length shard could
skip the collective while peers entered it, causing a distributed hang." A bucket with fewer
elements than the DP size (here the FP32 tail bucket holding the two learned scalars
`logit_scale` and `value_scale`) gives the last ranks an empty slice of the ceil-divided shards;
`_step_bucket` returns no updated refs there, so `step` skips `_all_gather_bucket` on those ranks
only.
Fix: "Make every rank participate in the full active-bucket all-gather, including zero-length shard
ranks." (The PR also routes the `none`/`cpu` offload modes back to the resident FP32 `main_grad`
path; that performance half is not reproduced here.)
Expected rankcheck finding: RC101 on `self._all_gather_bucket(bucket, updated_refs)` in
`AdamWFP32Master.step` (areno_lite/engine/optim/adamw_fp32_master.py), guarded by the rank-local
`if updated_refs:`.
Inferred: the stored snapshot of AReno predates #498 and #512, so the disk-mode reduce-scatter and
the post-#498 `step` are reconstructed from the PR description and the pre-#498 optimizer (which
already had the `if updated_refs:` guard before `_all_gather_bucket`); the model and loop are
written for this reconstruction.
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

from areno_lite.engine.optim import AdamWFP32Master, OptimizerOffloadConfig


class ActorCritic(nn.Module):
    def __init__(self, vocab=32000, hidden=1024, layers=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.blocks = nn.ModuleList(
            [nn.TransformerEncoderLayer(hidden, 16, 4 * hidden, batch_first=True, norm_first=True) for _ in range(layers)]
        )
        self.lm_head = nn.Linear(hidden, vocab, bias=False)
        self.value_head = nn.Linear(hidden, 1)
        # Learned temperature / value scale, kept in FP32 (they end up in their own tail bucket).
        self.logit_scale = nn.Parameter(torch.ones(1))
        self.value_scale = nn.Parameter(torch.ones(1))

    def cast_(self, dtype):
        for module in (self.embed, self.blocks, self.lm_head, self.value_head):
            module.to(dtype=dtype)
        return self

    def forward(self, tokens):
        h = self.embed(tokens)
        for block in self.blocks:
            h = block(h)
        return self.lm_head(h) * self.logit_scale, self.value_head(h).squeeze(-1) * self.value_scale


def ppo_loss(logits, values, batch, clip=0.2):
    logp = torch.log_softmax(logits.float(), -1).gather(-1, batch["actions"].unsqueeze(-1)).squeeze(-1)
    ratio = torch.exp(logp - batch["old_logp"])
    adv = batch["advantages"]
    pg = -torch.min(ratio * adv, ratio.clamp(1 - clip, 1 + clip) * adv).mean()
    vf = F.mse_loss(values.float(), batch["returns"])
    return pg + 0.5 * vf


def synthetic_micro_batches(n, mb, seq, vocab, device):
    for _ in range(n):
        tokens = torch.randint(0, vocab, (mb, seq), device=device)
        yield tokens, {
            "actions": torch.randint(0, vocab, (mb, seq), device=device),
            "old_logp": -torch.rand(mb, seq, device=device) * 5,
            "advantages": torch.randn(mb, seq, device=device),
            "returns": torch.randn(mb, seq, device=device),
        }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--micro_batches", type=int, default=4)
    parser.add_argument("--micro_batch_size", type=int, default=2)
    parser.add_argument("--seq_len", type=int, default=512)
    parser.add_argument("--lr", type=float, default=1e-6)
    parser.add_argument("--bucket_numel", type=int, default=16 * 1024 * 1024)
    parser.add_argument("--offload", default="disk", choices=["none", "cpu", "disk"])
    args = parser.parse_args()

    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)

    model = ActorCritic().to(device).cast_(torch.bfloat16)
    optimizer = AdamWFP32Master(
        model.parameters(), lr=args.lr, weight_decay=0.01, bucket_numel=args.bucket_numel,
        offload_config=OptimizerOffloadConfig(offload=args.offload),
    )

    for step in range(args.steps):
        stats = torch.zeros(2, device=device)
        for tokens, batch in synthetic_micro_batches(args.micro_batches, args.micro_batch_size, args.seq_len, 32000, device):
            logits, values = model(tokens)
            loss = ppo_loss(logits, values, batch) / args.micro_batches
            loss.backward()
            optimizer.reduce_scatter_grads()
            stats += torch.stack([loss.detach().float(), torch.ones((), device=device)])
        optimizer.step()
        optimizer.zero_grad()
        dist.all_reduce(stats)
        if dist.get_rank() == 0:
            print(f"step {step}: loss {(stats[0] / stats[1] * args.micro_batches).item():.4f}")

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
