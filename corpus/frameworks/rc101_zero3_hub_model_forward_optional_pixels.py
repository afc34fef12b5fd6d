"""A vision-language model trained under ZeRO-3 whose forward takes the token ids every batch
brings and `pixel_values=None` for the batches that have images; the training script gets the
model from a hub by name, so no call in the project is seen to reach this forward. Beside a
required input, the optional one is the batch's own: a rank whose batch is text-only skips the
vision tower's parameter gather that the others wait in. (Compare
safe_zero3_two_tower_encoder_api_all_inputs_optional.py, where every input is optional.)"""
from typing import Optional

import deepspeed
import torch
from torch import nn


class HubVisionLanguageModel(nn.Module):
    def __init__(self, vocab: int, dim: int):
        super().__init__()
        self.vision_tower = nn.Sequential(nn.Conv2d(3, dim, kernel_size=14, stride=14), nn.Flatten(2))
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids: torch.Tensor, pixel_values: Optional[torch.Tensor] = None):
        hidden = self.embed_tokens(input_ids)
        if pixel_values is not None:
            patches = self.vision_tower(pixel_values).transpose(1, 2)  # expect: RC101
            hidden = torch.cat([patches, hidden], dim=1)
        return self.lm_head(hidden)


def build(model_name: str, config):
    model = create_model(model_name)
    engine, _, _, _ = deepspeed.initialize(model=model, config=config)
    return engine


def create_model(model_name: str) -> nn.Module:
    return torch.hub.load("org/vlm-models", model_name)


def train(engine, loader):
    for batch in loader:
        logits = engine(batch["input_ids"], pixel_values=batch.get("pixel_values"))
        loss = logits.float().logsumexp(-1).mean()
        engine.backward(loss)
        engine.step()
