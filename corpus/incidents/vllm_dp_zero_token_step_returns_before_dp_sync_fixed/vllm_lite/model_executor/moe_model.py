"""A small MoE decoder standing in for the served model: with expert parallelism every MoE layer
all-gathers the DP-padded tokens across the EP group and reduce-scatters the expert outputs back
(the `allgather_reducescatter` all2all backend), so every DP rank must run every forward."""
import torch
from torch import nn

from vllm_lite.distributed.parallel_state import get_ep_group


class FusedMoE(nn.Module):
    def __init__(self, hidden, num_experts, top_k, ep_size, ep_rank):
        super().__init__()
        self.top_k = top_k
        self.local_experts = nn.ModuleList(
            nn.Sequential(nn.Linear(hidden, 4 * hidden), nn.SiLU(), nn.Linear(4 * hidden, hidden))
            for _ in range(num_experts // ep_size))
        self.expert_offset = ep_rank * (num_experts // ep_size)
        self.gate = nn.Linear(hidden, num_experts, bias=False)

    def forward(self, hidden_states):
        ep = get_ep_group()
        tokens = ep.all_gather(hidden_states)
        weights, ids = torch.topk(torch.softmax(self.gate(tokens), dim=-1), self.top_k, dim=-1)
        out = torch.zeros_like(tokens)
        for j, expert in enumerate(self.local_experts):
            hit = (ids == self.expert_offset + j)
            rows = hit.any(-1).nonzero().squeeze(-1)
            if rows.numel():
                w = (weights * hit).sum(-1, keepdim=True)[rows]
                out[rows] += w * expert(tokens[rows])
        return ep.reduce_scatter(out)


class MoEDecoder(nn.Module):
    def __init__(self, vocab, hidden, layers, num_experts, top_k, ep_size, ep_rank):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.moe_layers = nn.ModuleList(FusedMoE(hidden, num_experts, top_k, ep_size, ep_rank)
                                        for _ in range(layers))
        self.norm = nn.LayerNorm(hidden)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, input_ids, positions):
        h = self.embed(input_ids)
        for layer in self.moe_layers:
            h = h + layer(h)
        return self.norm(h)

    def compute_logits(self, hidden_states):
        return self.lm_head(hidden_states)
