"""Qwen2-VL-style supervised fine-tuning with DeepSpeed ZeRO-3 on a dataset that mixes image and
video samples (and some text-only ones): the model's forward runs the vision tower once for the
batch's images and once more for its videos.

Thread: https://github.com/QwenLM/Qwen3-VL/issues/126 ("Have you tried mixed video-image training
with ZeRO3?")
Project: QwenLM/Qwen3-VL (Qwen2-VL fine-tuning)
What hung: with ZeRO-3 and a per-device batch holding both images and videos the run hangs (DeepSpeed
sometimes prints "Invalidate trace cache @ step 3: expected module 2, but got module 1"): "self.visual
on different GPUs may be called once on some and twice on others, depending on what the micro-batch
holds". Comments add that text-only samples hang the same way; ZeRO-2 does not.
Fix (the thread's suggestions, one applied by a commenter): merge the two branches into one vision
call and give a rank with no visual input a tiny dummy image, so every rank runs the vision tower
exactly once per step.
Expected rankcheck finding: RC101 on each `self.visual(...)` call, reached only on the ranks whose
batch holds images (videos), where the call all-gathers the tower's partitioned weights.
Inferred: the reconstruction keeps the model's forward in the project (a patched Qwen2-VL
wrapper); the training loop is a plain DeepSpeed one.
"""
import argparse

import deepspeed
import torch
import torch.nn as nn


class QwenVLForTraining(nn.Module):
    def __init__(self, language_model, visual, image_token_id: int, video_token_id: int):
        super().__init__()
        self.model = language_model
        self.visual = visual
        self.image_token_id = image_token_id
        self.video_token_id = video_token_id

    def forward(self, input_ids, attention_mask, labels, pixel_values=None, image_grid_thw=None,
                pixel_values_videos=None, video_grid_thw=None):
        inputs_embeds = self.model.embed_tokens(input_ids)
        # One vision call per step on every rank: images and videos together, and a tiny blank
        # image where the batch has neither (its embeddings are added times zero).
        pixels = [p for p in (pixel_values, pixel_values_videos) if p is not None]
        grids = [g for g in (image_grid_thw, video_grid_thw) if g is not None]
        if not pixels:
            pixels = [torch.zeros(4, 1176, device=input_ids.device)]
            grids = [torch.tensor([[1, 2, 2]], device=input_ids.device)]
        visual_embeds = self.visual(torch.cat(pixels).type(self.visual.dtype), grid_thw=torch.cat(grids))
        visual_mask = ((input_ids == self.image_token_id) | (input_ids == self.video_token_id)).unsqueeze(-1)
        if visual_mask.any():
            inputs_embeds = inputs_embeds.masked_scatter(visual_mask.expand_as(inputs_embeds), visual_embeds.to(inputs_embeds.dtype))
        else:
            inputs_embeds = inputs_embeds + visual_embeds.mean() * 0.0
        return self.model(inputs_embeds=inputs_embeds, attention_mask=attention_mask, labels=labels)


def train(language_model, visual, loader, ds_config):
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)
    parser.add_argument("--epochs", type=int, default=1)
    args = parser.parse_args()
    model = QwenVLForTraining(language_model, visual, image_token_id=151655, video_token_id=151656)
    engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=ds_config)
    for _ in range(args.epochs):
        for batch in loader:
            out = engine(
                input_ids=batch["input_ids"].to(engine.device),
                attention_mask=batch["attention_mask"].to(engine.device),
                labels=batch["labels"].to(engine.device),
                pixel_values=batch.get("pixel_values"),
                image_grid_thw=batch.get("image_grid_thw"),
                pixel_values_videos=batch.get("pixel_values_videos"),
                video_grid_thw=batch.get("video_grid_thw"),
            )
            engine.backward(out.loss)
            engine.step()
