"""Safe twin of swift_minicpm_resampler_pos_cache_ddp_broadcast: the per-rank position cache is
excluded from DDP's buffer broadcast before wrapping, as in the ms-swift fix.

Thread: https://github.com/modelscope/ms-swift/pull/10187 ("fix(model): skip MiniCPM position cache in DDP broadcasts")
Project: modelscope/ms-swift
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
    # the resampler's position cache grows per rank: keep it out of DDP's buffer broadcast
    DDP._set_params_and_buffers_to_ignore_for_model(model, ["resampler.pos_embed"])
    model = DDP(model, device_ids=[local_rank], find_unused_parameters=True)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=args.lr)
    sampler = DistributedSampler(train_set)
    loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler, collate_fn=collate)

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for batch in loader:
            batch = {k: v.cuda(non_blocking=True) for k, v in batch.items()}
            outputs = model(**batch)
            outputs.loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
    dist.destroy_process_group()
