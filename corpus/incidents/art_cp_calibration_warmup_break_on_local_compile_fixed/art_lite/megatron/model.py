"""Trimmed model wrapper: the embedding, the decoder blocks (gated delta net blocks interleaved
with attention blocks, each compiled with torch.compile) and the LM head of a Qwen3.5-style model."""
import torch
import torch.nn as nn
from transformers import AutoModelForCausalLM


class GDNBlock(nn.Module):
    is_gdn = True

    def __init__(self, layer, chunk=64):
        super().__init__()
        self.layer = layer
        self.chunk = chunk

    def chunk_states(self, hidden):
        b, t, d = hidden.shape
        pad = (-t) % self.chunk
        h = torch.nn.functional.pad(hidden, (0, 0, 0, pad))
        return h.view(b, -1, self.chunk, d).mean(2).reshape(-1, d)

    def forward(self, hidden, remote_states=None):
        if remote_states is not None and remote_states.numel():
            hidden = hidden + remote_states.mean(0)
        return self.layer(hidden)[0]


class AttnBlock(nn.Module):
    is_gdn = False

    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, hidden, position_ids=None):
        return self.layer(hidden, position_ids=position_ids)[0]


class CPModel(nn.Module):
    def __init__(self, hf_model):
        super().__init__()
        inner = hf_model.model
        self.embed = inner.embed_tokens
        blocks = []
        for layer in inner.layers:
            kind = getattr(layer, "layer_type", "full_attention")
            block = GDNBlock(layer) if kind == "linear_attention" else AttnBlock(layer)
            blocks.append(torch.compile(block, dynamic=True))
        self.blocks = nn.ModuleList(blocks)
        self.head = hf_model.lm_head


def load_model(name):
    hf = AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch.bfloat16).cuda().eval()
    return CPModel(hf)
