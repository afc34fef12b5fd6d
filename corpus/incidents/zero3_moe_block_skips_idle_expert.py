"""Full fine-tuning of a Mixtral-style mixture-of-experts model with DeepSpeed ZeRO-3: the sparse MoE
block skips every expert that no token of this rank's batch was routed to.

Thread: https://github.com/hiyouga/LlamaFactory/issues/2315 ("Patch for full training Mixtral using
DeepSpeed Zero3"), pointing to microsoft/DeepSpeed#4808
Project: hiyouga/LlamaFactory (the Mixtral sparse MoE block of transformers)
What hung: "When full training Mixtral using DeepSpeed Zero3, hangs happened after several training
steps"; "in current batch there exists at least one expert with no tokens assigned to it. When
using zero3, backward process will hang because of reduce-scatter waiting." The block's
`if top_x.shape[0] == 0: continue` skips the idle expert's forward, so its partitioned weights are
neither gathered nor reduced on that rank, while ranks whose tokens reached the expert wait for it.
Fix (the patch in the thread): run every expert on every step and multiply the output of the
experts no token chose by zero (a dense MoE forward), so every rank gathers every expert.
Expected rankcheck finding: RC103 on the `continue` that skips an expert on ranks whose tokens did
not reach it, inside the loop whose later rounds run the expert's forward.
Inferred: the thread patches the transformers block; here the project defines the same block in
its own model, trained with `deepspeed.initialize`.
"""
import argparse

import deepspeed
import torch
import torch.nn as nn
import torch.nn.functional as F


class ExpertMLP(nn.Module):
    def __init__(self, hidden: int, ffn: int):
        super().__init__()
        self.w1 = nn.Linear(hidden, ffn, bias=False)
        self.w2 = nn.Linear(ffn, hidden, bias=False)
        self.w3 = nn.Linear(hidden, ffn, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class SparseMoeBlock(nn.Module):
    def __init__(self, hidden: int, ffn: int, num_experts: int, top_k: int):
        super().__init__()
        self.num_experts = num_experts
        self.top_k = top_k
        self.gate = nn.Linear(hidden, num_experts, bias=False)
        self.experts = nn.ModuleList([ExpertMLP(hidden, ffn) for _ in range(num_experts)])

    def forward(self, hidden_states):
        batch, seq, hidden = hidden_states.shape
        flat = hidden_states.view(-1, hidden)
        router_logits = self.gate(flat)
        weights, selected = torch.topk(F.softmax(router_logits, dim=-1, dtype=torch.float), self.top_k, dim=-1)
        weights = (weights / weights.sum(dim=-1, keepdim=True)).to(flat.dtype)
        out = torch.zeros_like(flat)
        expert_mask = F.one_hot(selected, num_classes=self.num_experts).permute(2, 1, 0)
        for expert_idx in range(self.num_experts):
            expert_layer = self.experts[expert_idx]
            idx, top_x = torch.where(expert_mask[expert_idx])
            if top_x.shape[0] == 0:
                continue  # expect: RC103
            current = flat[None, top_x].reshape(-1, hidden)
            current = expert_layer(current) * weights[top_x, idx, None]
            out.index_add_(0, top_x, current.to(flat.dtype))
        return out.view(batch, seq, hidden), router_logits


class DecoderLayer(nn.Module):
    def __init__(self, hidden: int, ffn: int, heads: int, num_experts: int, top_k: int):
        super().__init__()
        self.norm1 = nn.LayerNorm(hidden)
        self.attn = nn.MultiheadAttention(hidden, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(hidden)
        self.moe = SparseMoeBlock(hidden, ffn, num_experts, top_k)

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        moe_out, _ = self.moe(self.norm2(x))
        return x + moe_out


class MoETransformer(nn.Module):
    def __init__(self, vocab: int, hidden: int, ffn: int, layers: int, heads: int, num_experts: int, top_k: int):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.layers = nn.ModuleList([DecoderLayer(hidden, ffn, heads, num_experts, top_k) for _ in range(layers)])
        self.head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, input_ids, labels):
        x = self.embed(input_ids)
        for layer in self.layers:
            x = layer(x)
        logits = self.head(x)
        return F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1))


def main(loader):
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)
    parser.add_argument("--deepspeed_config", default="ds_zero3.json")
    args = parser.parse_args()
    model = MoETransformer(vocab=32000, hidden=1024, ffn=3584, layers=8, heads=16, num_experts=8, top_k=2)
    engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
    for batch in loader:
        loss = engine(batch["input_ids"].to(engine.device), batch["labels"].to(engine.device))
        engine.backward(loss)
        engine.step()
