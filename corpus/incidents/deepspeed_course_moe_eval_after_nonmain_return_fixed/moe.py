"""Tiny top-1 mixture-of-experts layer for the course's MoE lesson. Without expert parallelism every
rank holds all experts and the forward is purely local; with `expert_parallel=True` each rank holds
`num_experts // world_size` experts and tokens are exchanged with two all-to-alls per forward.
"""
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


class Expert(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class MoELayer(nn.Module):
    def __init__(self, d_model, d_ff, num_experts, expert_parallel=False):
        super().__init__()
        self.expert_parallel = expert_parallel
        self.world_size = dist.get_world_size() if expert_parallel else 1
        self.num_local_experts = num_experts // self.world_size
        self.gate = nn.Linear(d_model, num_experts, bias=False)
        self.experts = nn.ModuleList(Expert(d_model, d_ff) for _ in range(self.num_local_experts))
        self.num_experts = num_experts

    def forward(self, x):
        tokens = x.reshape(-1, x.shape[-1])
        probs = F.softmax(self.gate(tokens), dim=-1)
        weight, expert_idx = probs.max(dim=-1)
        if not self.expert_parallel:
            out = torch.zeros_like(tokens)
            for e, expert in enumerate(self.experts):
                sel = expert_idx == e
                if sel.any():
                    out[sel] = expert(tokens[sel])
            return (out * weight.unsqueeze(-1)).reshape(x.shape)

        # expert parallel: route tokens to the rank that owns their expert
        dest_rank = expert_idx // self.num_local_experts
        order = torch.argsort(dest_rank)
        send_counts = torch.bincount(dest_rank, minlength=self.world_size)
        recv_counts = torch.empty_like(send_counts)
        dist.all_to_all_single(recv_counts, send_counts)  # ALL-TO-ALL: token counts
        send = tokens[order]
        recv = send.new_empty(int(recv_counts.sum()), tokens.shape[-1])
        dist.all_to_all_single(recv, send, recv_counts.tolist(), send_counts.tolist())  # ALL-TO-ALL: tokens
        local_idx = (expert_idx[order] % self.num_local_experts)
        recv_idx = torch.empty(int(recv_counts.sum()), dtype=local_idx.dtype, device=local_idx.device)
        dist.all_to_all_single(recv_idx, local_idx, recv_counts.tolist(), send_counts.tolist())
        processed = torch.zeros_like(recv)
        for e, expert in enumerate(self.experts):
            sel = recv_idx == e
            if sel.any():
                processed[sel] = expert(recv[sel])
        back = torch.empty_like(send)
        dist.all_to_all_single(back, processed, send_counts.tolist(), recv_counts.tolist())  # ALL-TO-ALL: combine
        out = torch.empty_like(tokens)
        out[order] = back
        return (out * weight.unsqueeze(-1)).reshape(x.shape)


class TinyMoEModel(nn.Module):
    def __init__(self, d_in=32, d_model=64, d_ff=256, num_experts=8, expert_parallel=False):
        super().__init__()
        self.inp = nn.Linear(d_in, d_model)
        self.moe = MoELayer(d_model, d_ff, num_experts, expert_parallel=expert_parallel)
        self.head = nn.Linear(d_model, 1)

    def forward(self, x):
        return self.head(self.moe(F.gelu(self.inp(x)))).squeeze(-1)
