"""LoRA fine-tuning of a MiniCPM-o style audio/video model under plain DDP: the resampler grows a
non-persistent 2-D position-embedding cache on the fly whenever a sample has a larger patch grid, so
the buffer's shape depends on the images each rank happened to see.

Thread: https://github.com/modelscope/ms-swift/pull/10187 ("fix(model): skip MiniCPM position cache in DDP broadcasts")
Project: modelscope/ms-swift (fixes ms-swift issue #10183, MiniCPM-o 4.5 + LoRA + DDP NCCL hang)
What hung: DDP's forward broadcasts every module buffer from rank 0 (`_sync_buffers`). After a large
image reached rank 2, its `resampler.pos_embed` had been re-registered with a bigger grid, so in the
same buffer broadcast ranks 0, 1 and 3 sent 64 floats while rank 2 sent 24,084,544 floats (NCCL logs
in the issue); the collective never completed and GPUs sat at 100% with no error.
Fix: declare `resampler.pos_embed` a DDP exclusion (params-and-buffers to ignore) in the MiniCPM
loader, so the per-rank cache is no longer broadcast; other buffers still synchronise.
Inferred: the training loop is a hand-written DDP loop standing in for swift's Trainer; the
resampler mirrors the upstream cache logic in shape only.
Expected rankcheck finding: RC104 on the DDP forward `model(**batch)`, whose buffer broadcast carries a
tensor whose shape differs per rank.
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def get_2d_sincos_pos_embed(embed_dim, grid_h, grid_w):
    ys, xs = torch.meshgrid(torch.arange(grid_h), torch.arange(grid_w), indexing="ij")
    freq = torch.arange(embed_dim // 4) / (embed_dim // 4)
    parts = [torch.sin(ys[..., None] * freq), torch.cos(ys[..., None] * freq),
             torch.sin(xs[..., None] * freq), torch.cos(xs[..., None] * freq)]
    return torch.cat(parts, dim=-1).float()


class Resampler(nn.Module):
    def __init__(self, num_queries, embed_dim, kv_dim, max_size=(70, 70)):
        super().__init__()
        self.embed_dim = embed_dim
        self.query = nn.Parameter(torch.zeros(num_queries, embed_dim))
        self.kv_proj = nn.Linear(kv_dim, embed_dim, bias=False)
        self.attn = nn.MultiheadAttention(embed_dim, num_heads=8, batch_first=True)
        self.max_size = list(max_size)
        self._set_2d_pos_cache(self.max_size)

    def _set_2d_pos_cache(self, max_size, device="cpu"):
        pos_embed = get_2d_sincos_pos_embed(self.embed_dim, *max_size).to(device)
        self.register_buffer("pos_embed", pos_embed, persistent=False)

    def _adjust_pos_cache(self, tgt_sizes, device):
        max_h = int(tgt_sizes[:, 0].max())
        max_w = int(tgt_sizes[:, 1].max())
        if max_h > self.max_size[0] or max_w > self.max_size[1]:
            self.max_size = [max(max_h, self.max_size[0]), max(max_w, self.max_size[1])]
            self._set_2d_pos_cache(self.max_size, device)

    def forward(self, x, tgt_sizes):
        self._adjust_pos_cache(tgt_sizes, x.device)
        h, w = int(tgt_sizes[0, 0]), int(tgt_sizes[0, 1])
        pos = self.pos_embed[:h, :w].reshape(h * w, -1)
        kv = self.kv_proj(x) + pos[: x.shape[1]]
        q = self.query.unsqueeze(0).expand(x.shape[0], -1, -1)
        return self.attn(q, kv, kv)[0]


class OmniForCausalLM(nn.Module):
    def __init__(self, vpm, llm, embed_dim, kv_dim):
        super().__init__()
        self.vpm, self.llm = vpm, llm
        self.resampler = Resampler(64, embed_dim, kv_dim)

    def forward(self, input_ids, pixel_values, tgt_sizes, labels):
        vision = self.resampler(self.vpm(pixel_values), tgt_sizes)
        return self.llm(input_ids=input_ids, vision_embeds=vision, labels=labels)


def main(build_vpm, build_llm, train_set, collate):
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--batch_size", type=int, default=1)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)

    model = OmniForCausalLM(build_vpm(), build_llm(), embed_dim=3584, kv_dim=1152).cuda()
    model = DDP(model, device_ids=[local_rank], find_unused_parameters=True)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=args.lr)
    sampler = DistributedSampler(train_set)
    loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler, collate_fn=collate)

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for batch in loader:
            batch = {k: v.cuda(non_blocking=True) for k, v in batch.items()}
            outputs = model(**batch)  # expect: RC104
            outputs.loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
    dist.destroy_process_group()
