"""A vision-language model trained under DeepSpeed ZeRO-3 (InternVL's QLLaMA shape): learned query
tokens start as a random parameter, `nn.Parameter(torch.randn(1, n, d))`, which ZeRO-3 builds from
rank 0's values on every rank. The image path passes the query tokens, repeated per image, to the
decoder as `inputs_embeds`; the text path passes token ids, and the decoder embeds them only when
no `inputs_embeds` were given. Which path runs is the caller's code, alike on every rank, and the
vision encoder checks the layout of the pixel batch (4 dimensions), not its rank."""
from typing import Optional

import deepspeed
import torch
from torch import nn


class QueryDecoder(nn.Module):
    def __init__(self, vocab: int, dim: int):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.layer = nn.TransformerDecoderLayer(dim, 8, batch_first=True)

    def forward_train(self, vision_states: torch.Tensor, input_ids: Optional[torch.Tensor] = None,
                      inputs_embeds: Optional[torch.Tensor] = None) -> torch.Tensor:
        if inputs_embeds is None:
            inputs_embeds = self.embed_tokens(input_ids)
        return self.layer(inputs_embeds, vision_states)


class VisionLanguageModel(nn.Module):
    def __init__(self, vocab: int, dim: int, num_query_tokens: int):
        super().__init__()
        self.patch_embedding = nn.Conv2d(3, dim, kernel_size=14, stride=14)
        self.query_tokens = nn.Parameter(torch.randn(1, num_query_tokens, dim))
        self.decoder = QueryDecoder(vocab, dim)

    def forward(self, pixel_values: Optional[torch.Tensor] = None, input_ids: Optional[torch.Tensor] = None) -> torch.Tensor:
        if len(pixel_values.shape) == 4:
            vision_states = self.patch_embedding(pixel_values).flatten(2).transpose(1, 2)
        else:
            raise ValueError(f"wrong pixel_values size: {pixel_values.shape}")
        queries = self.query_tokens.repeat(vision_states.shape[0], 1, 1)
        image_features = self.decoder.forward_train(vision_states, inputs_embeds=queries)
        if input_ids is None:
            return image_features
        return self.decoder.forward_train(image_features, input_ids=input_ids)


def train(model: VisionLanguageModel, config):
    return deepspeed.initialize(model=model, config=config)[0]
