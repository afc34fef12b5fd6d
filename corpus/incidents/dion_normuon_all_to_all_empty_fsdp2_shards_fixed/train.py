"""FSDP2 training of a small sparse model with NorMuon over an 8-way `dp_shard` mesh
(`torchrun --nproc_per_node=8 train.py`). Its per-head attention gate has shape
`(num_attention_heads=18, hidden=2304)`: under FSDP2's contiguous row chunking ranks 0-5 hold
`(3, 2304)` shards and ranks 6-7 `(0, 2304)`.

Part of the reconstruction of https://github.com/microsoft/dion/pull/74; see
dion/megabatch_base.py for the incident description. (Inferred: the model around the gate; the PR
names only the gate's shape and the mesh.)
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard

from dion import NorMuon


class GatedAttentionBlock(nn.Module):
    def __init__(self, hidden: int = 2304, num_heads: int = 18):
        super().__init__()
        self.num_heads = num_heads
        self.qkv = nn.Linear(hidden, 3 * hidden, bias=False)
        self.out = nn.Linear(hidden, hidden, bias=False)
        # One scalar gate per head, computed from the token: weight shape (num_heads, hidden).
        self.head_gate = nn.Linear(hidden, num_heads, bias=False)
        self.norm = nn.LayerNorm(hidden)

    def forward(self, x):
        b, t, d = x.shape
        h = self.norm(x)
        q, k, v = self.qkv(h).view(b, t, 3, self.num_heads, d // self.num_heads).unbind(2)
        attn = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        gate = torch.sigmoid(self.head_gate(h)).transpose(1, 2).unsqueeze(-1)
        attn = (attn * gate).transpose(1, 2).reshape(b, t, d)
        return x + self.out(attn)


class TinyLM(nn.Module):
    def __init__(self, vocab: int = 32000, hidden: int = 2304, layers: int = 4):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.blocks = nn.ModuleList([GatedAttentionBlock(hidden) for _ in range(layers)])
        self.head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--seq", type=int, default=1024)
    args = parser.parse_args()

    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    mesh = init_device_mesh("cuda", (dist.get_world_size(),), mesh_dim_names=("dp_shard",))

    model = TinyLM().cuda()
    for block in model.blocks:
        fully_shard(block, mesh=mesh)
    fully_shard(model, mesh=mesh)

    matrices = [p for n, p in model.named_parameters() if p.ndim == 2 and "embed" not in n and "head." not in n]
    optimizer = NorMuon([{"params": matrices}], distributed_mesh=mesh, lr=0.02)
    others = [p for n, p in model.named_parameters() if p.ndim != 2 or "embed" in n or "head." in n]
    scalar_opt = torch.optim.AdamW(others, lr=3e-4)

    for step in range(args.steps):
        tokens = torch.randint(0, 32000, (args.batch, args.seq + 1), device="cuda")
        logits = model(tokens[:, :-1])
        loss = F.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten())
        loss.backward()
        optimizer.step()
        scalar_opt.step()
        optimizer.zero_grad(set_to_none=True)
        scalar_opt.zero_grad(set_to_none=True)
        if dist.get_rank() == 0 and step % 50 == 0:
            print(f"step {step}: loss {loss.item():.4f}")

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
