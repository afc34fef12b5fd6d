"""A two-tower contrastive model (open_clip's CLIP shape) trained under ZeRO-3: its forward takes
`image=None, text=None` and encodes what it is given, an API for callers that want one tower or
both; the training script gets the model from a hub by name, so no call in the project is seen to
reach this forward. Whether an image is passed is written at each call site, alike on every rank
(training passes both on every step); the towers are not skipped per rank, and nothing is reported. (Beside
a required input the batch always brings, an optional `pixel_values` stays per-rank: see
rc101_zero3_vision_encoder_skipped_on_empty_image_batch.py.)"""
from typing import Optional

import deepspeed
import torch
from torch import nn


class TwoTowerCLIP(nn.Module):
    def __init__(self, vocab: int, dim: int):
        super().__init__()
        self.visual = nn.Sequential(nn.Conv2d(3, dim, kernel_size=16, stride=16), nn.Flatten(2))
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.logit_scale = nn.Parameter(torch.ones([]))

    def encode_image(self, image: torch.Tensor) -> torch.Tensor:
        return self.visual(image).mean(-1)

    def encode_text(self, text: torch.Tensor) -> torch.Tensor:
        return self.embed_tokens(text).mean(1)

    def forward(self, image: Optional[torch.Tensor] = None, text: Optional[torch.Tensor] = None):
        image_features = self.encode_image(image) if image is not None else None
        text_features = self.encode_text(text) if text is not None else None
        return image_features, text_features, self.logit_scale.exp()


def build(model_name: str, config):
    model = create_model(model_name)
    engine, _, _, _ = deepspeed.initialize(model=model, config=config)
    return engine


def create_model(model_name: str) -> nn.Module:
    return torch.hub.load("org/clip-models", model_name)


def train(engine, loader):
    for images, texts in loader:
        image_features, text_features, scale = engine(image=images, text=texts)
        logits = scale * image_features @ text_features.t()
        labels = torch.arange(logits.size(0))
        loss = nn.functional.cross_entropy(logits, labels)
        engine.backward(loss)
        engine.step()
