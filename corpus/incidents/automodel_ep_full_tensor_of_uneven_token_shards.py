"""NeMo Automodel's expert-parallel MoE: each rank holds the tokens of its own packed
variable-length sequences, and the experts' input is all-gathered across the expert-parallel mesh
with `DTensor.from_local(x, mesh, [Shard(0)]).full_tensor()`.

Thread: https://github.com/NVIDIA-NeMo/Automodel/pull/1365 ("fix: EP collective deadlock with variable-length token counts")
Project: NVIDIA-NeMo/Automodel (PyTorch-native training of Hugging Face models, expert parallelism)
What hung: `full_tensor()` of a DTensor built from per-rank shards of different lengths: DTensor
takes the shards to be even, each rank expects chunk sizes from its peers that they do not send,
and the all-gather deadlocks (the output redistribution had the same flaw).
Fix (the PR): all-gather the token counts, pad each rank's tokens to the longest, all-gather the
padded tensors, trim the padding off.
Expected rankcheck finding: RC104 on the `full_tensor()` of the per-rank token shard.
(Module structure, names and sizes are reconstructed.)
"""
import torch
from torch import nn
from torch.distributed.tensor import DTensor, Shard


class ExpertParallelMoE(nn.Module):
    def __init__(self, hidden: int, n_local_experts: int, ep_mesh):
        super().__init__()
        self.ep_mesh = ep_mesh
        self.router = nn.Linear(hidden, n_local_experts * ep_mesh.size())
        self.experts = nn.ModuleList([nn.Linear(hidden, hidden) for _ in range(n_local_experts)])

    def forward(self, hidden_states: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        # Packed sequences: only the real tokens go to the experts, as many as this rank holds.
        tokens = hidden_states[attention_mask.bool()]
        gathered = DTensor.from_local(tokens, self.ep_mesh, [Shard(0)]).full_tensor()  # expect: RC104
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
