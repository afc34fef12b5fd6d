"""A speech encoder with LayerDrop (each layer skipped with probability `layerdrop` in training),
trained with DeepSpeed ZeRO-3: a rank that drops a layer skips its forward, and with it the
all-gather of the layer's partitioned weights the other ranks wait in (transformers#16717,
DeepSpeed#1888)."""
import deepspeed
import torch
import torch.nn as nn


class EncoderLayer(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, 8, batch_first=True)
        self.ff = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = x + self.attn(x, x, x, need_weights=False)[0]
        return x + self.ff(x)


class Encoder(nn.Module):
    def __init__(self, dim: int, depth: int, layerdrop: float):
        super().__init__()
        self.layers = nn.ModuleList([EncoderLayer(dim) for _ in range(depth)])
        self.layerdrop = layerdrop

    def forward(self, hidden_states):
        for layer in self.layers:
            dropout_probability = torch.rand([])
            skip_the_layer = self.training and dropout_probability < self.layerdrop
            if not skip_the_layer:
                hidden_states = layer(hidden_states)  # expect: RC101
        return hidden_states


def train(loader, ds_config):
    engine, _, _, _ = deepspeed.initialize(model=Encoder(768, 12, 0.1), config=ds_config)
    for batch in loader:
        loss = engine(batch["features"].to(engine.device)).pow(2).mean()
        engine.backward(loss)
        engine.step()
