"""Safe twin of deepspeed_zero3_text_only_skips_vision.py: a text-only batch runs a dummy image
through the vision tower and the merger and adds `image_embeds.mean() * 0.`, so every rank issues
the vision tower's ZeRO-3 all-gathers on every step.

Thread: https://github.com/modelscope/ms-swift/pull/9639
"""
import argparse

import deepspeed
import torch
import torch.nn as nn


class VisionLanguageModel(nn.Module):
    def __init__(self, llm, vision_tower, merger, image_token_id):
        super().__init__()
        self.llm = llm
        self.vision_tower = vision_tower
        self.merger = merger
        self.image_token_id = image_token_id

    def get_input_embeds(self, input_ids, pixel_values=None, image_grid=None):
        inputs_embeds = self.llm.get_input_embeddings()(input_ids)
        if pixel_values is None:
            dummy_pixels = torch.zeros(1, 3, 14, 14, device=inputs_embeds.device, dtype=inputs_embeds.dtype)
            dummy_grid = torch.tensor([[1, 1, 1]], device=inputs_embeds.device)
            image_embeds = self.merger(self.vision_tower(dummy_pixels, dummy_grid))
            return inputs_embeds + image_embeds.mean() * 0.0
        vision_out = self.vision_tower(pixel_values, image_grid)
        image_embeds = self.merger(vision_out)
        mask = (input_ids == self.image_token_id).unsqueeze(-1).expand_as(inputs_embeds)
        inputs_embeds = inputs_embeds.masked_scatter(mask, image_embeds.to(inputs_embeds.dtype))
        return inputs_embeds

    def forward(self, input_ids, attention_mask, labels, pixel_values=None, image_grid=None):
        inputs_embeds = self.get_input_embeds(input_ids, pixel_values, image_grid)
        return self.llm(inputs_embeds=inputs_embeds, attention_mask=attention_mask, labels=labels)


def train(model, dataloader, ds_config):
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)
    parser.add_argument("--epochs", type=int, default=1)
    args = parser.parse_args()
    engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=ds_config)
    for epoch in range(args.epochs):
        for batch in dataloader:
            out = engine(
                input_ids=batch["input_ids"].to(engine.device),
                attention_mask=batch["attention_mask"].to(engine.device),
                labels=batch["labels"].to(engine.device),
                pixel_values=batch.get("pixel_values"),
                image_grid=batch.get("image_grid"),
            )
            engine.backward(out.loss)
            engine.step()
