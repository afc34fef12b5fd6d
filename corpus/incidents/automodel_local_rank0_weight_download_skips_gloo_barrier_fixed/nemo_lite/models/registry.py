"""Architectures with an in-house implementation (preferred over the HF modeling code)."""

import torch
from torch import nn


class _MoEBlock(nn.Module):
    def __init__(self, hidden: int, n_experts: int):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)
        self.router = nn.Linear(hidden, n_experts, bias=False)
        self.experts = nn.ModuleList(nn.Linear(hidden, hidden) for _ in range(n_experts))

    def forward(self, x):
        h = self.norm(x)
        weights = torch.softmax(self.router(h), dim=-1)
        mixed = torch.stack([expert(h) for expert in self.experts], dim=-1)
        return x + (mixed * weights.unsqueeze(-2)).sum(-1)


class Qwen3MoeForCausalLM(nn.Module):
    """Small stand-in for the custom MoE implementation the registry returns."""

    def __init__(self, config, **_unused):
        super().__init__()
        hidden = getattr(config, "hidden_size", 256)
        vocab = getattr(config, "vocab_size", 32000)
        layers = min(getattr(config, "num_hidden_layers", 4), 4)
        experts = min(getattr(config, "num_experts", 4), 4)
        self.config = config
        self.embed = nn.Embedding(vocab, hidden)
        self.layers = nn.ModuleList(_MoEBlock(hidden, experts) for _ in range(layers))
        self.lm_head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, input_ids, labels=None):
        x = self.embed(input_ids)
        for layer in self.layers:
            x = layer(x)
        logits = self.lm_head(x)
        if labels is None:
            return logits
        return nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1), labels[:, 1:].flatten())


class ModelRegistry:
    model_arch_name_to_cls = {
        "Qwen3MoeForCausalLM": Qwen3MoeForCausalLM,
    }
