"""The same model run on mixed batches: the loader leaves `pixel_values` out of a text-only batch,
and the forward runs the image path only when the batch has pixels. Under ZeRO-3 a rank whose
batch is text-only skips the patch embedding's parameter gather that the other ranks wait in."""
from typing import Optional

import deepspeed
import torch
from torch import nn


class VisionLanguageModel(nn.Module):
    def __init__(self, vocab: int, dim: int, num_query_tokens: int):
        super().__init__()
        self.patch_embedding = nn.Conv2d(3, dim, kernel_size=14, stride=14)
        self.query_tokens = nn.Parameter(torch.randn(1, num_query_tokens, dim))
        self.embed_tokens = nn.Embedding(vocab, dim)

    def forward(self, input_ids: torch.Tensor, pixel_values: Optional[torch.Tensor] = None) -> torch.Tensor:
        hidden = self.embed_tokens(input_ids)
        if pixel_values is not None:
            patches = self.patch_embedding(pixel_values).flatten(2).transpose(1, 2)  # expect: RC101
            hidden = torch.cat([patches + self.query_tokens[:, : patches.size(1)], hidden], dim=1)
        return hidden


def train(model: VisionLanguageModel, loader, config):
    engine, _, _, _ = deepspeed.initialize(model=model, config=config)
    for batch in loader:
        loss = engine(batch["input_ids"], pixel_values=batch.get("pixel_values")).pow(2).mean()
        engine.backward(loss)
        engine.step()
