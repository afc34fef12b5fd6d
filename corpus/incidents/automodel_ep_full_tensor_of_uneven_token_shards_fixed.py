"""Safe twin of automodel_ep_full_tensor_of_uneven_token_shards: the ranks agree on the longest
token count, pad to it, all-gather the padded tensors and trim each rank's padding off (the PR's
fix).

Thread: https://github.com/NVIDIA-NeMo/Automodel/pull/1365
"""
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn


class ExpertParallelMoE(nn.Module):
    def __init__(self, hidden: int, n_local_experts: int, ep_mesh):
        super().__init__()
        self.ep_mesh = ep_mesh
        self.router = nn.Linear(hidden, n_local_experts * ep_mesh.size())
        self.experts = nn.ModuleList([nn.Linear(hidden, hidden) for _ in range(n_local_experts)])

    def _gather_uneven(self, tokens: torch.Tensor) -> torch.Tensor:
        group = self.ep_mesh.get_group()
        world = dist.get_world_size(group)
        count = torch.tensor([tokens.shape[0]], device=tokens.device)
        counts = [torch.zeros_like(count) for _ in range(world)]
        dist.all_gather(counts, count, group=group)
        longest = int(torch.stack(counts).max())
        padded = F.pad(tokens, (0, 0, 0, longest - tokens.shape[0]))
        parts = [torch.empty_like(padded) for _ in range(world)]
        dist.all_gather(parts, padded, group=group)
        return torch.cat([part[: int(n)] for part, n in zip(parts, counts)])

    def forward(self, hidden_states: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        # Packed sequences: only the real tokens go to the experts, as many as this rank holds.
        tokens = hidden_states[attention_mask.bool()]
        gathered = self._gather_uneven(tokens)
        scores = self.router(gathered).softmax(-1)
        out = torch.zeros_like(gathered)
        for i, expert in enumerate(self.experts):
            out = out + scores[:, i : i + 1] * expert(gathered)
        return out


def train_step(model: ExpertParallelMoE, batch, optimizer) -> float:
    out = model(batch["hidden_states"], batch["attention_mask"])
    loss = out.pow(2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return loss.item()
