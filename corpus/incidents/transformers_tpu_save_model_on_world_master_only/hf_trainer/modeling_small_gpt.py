"""A small causal LM built on the trimmed PreTrainedModel (stand-in for GPT2LMHeadModel)."""
import torch
import torch.nn.functional as F
from torch import nn

from .modeling_utils import PretrainedConfig, PreTrainedModel


class SmallGPTConfig(PretrainedConfig):
    def __init__(self, vocab_size=50257, n_positions=512, n_embd=512, n_layer=6, n_head=8, **kwargs):
        super().__init__(**kwargs)
        self.vocab_size = vocab_size
        self.n_positions = n_positions
        self.n_embd = n_embd
        self.n_layer = n_layer
        self.n_head = n_head


class SmallGPTLMHeadModel(PreTrainedModel):
    config_class = SmallGPTConfig

    def __init__(self, config):
        super().__init__(config)
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.wpe = nn.Embedding(config.n_positions, config.n_embd)
        layer = nn.TransformerEncoderLayer(config.n_embd, config.n_head, 4 * config.n_embd, batch_first=True, norm_first=True)
        self.h = nn.TransformerEncoder(layer, config.n_layer)
        self.ln_f = nn.LayerNorm(config.n_embd)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.lm_head.weight = self.wte.weight

    def forward(self, input_ids, labels=None):
        seq_len = input_ids.size(1)
        positions = torch.arange(seq_len, device=input_ids.device)
        x = self.wte(input_ids) + self.wpe(positions)
        causal = torch.triu(torch.full((seq_len, seq_len), float("-inf"), device=input_ids.device), diagonal=1)
        logits = self.lm_head(self.ln_f(self.h(x, mask=causal)))
        if labels is None:
            return (logits,)
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1))
        return (loss, logits)
