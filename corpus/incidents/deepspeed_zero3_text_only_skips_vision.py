"""Vision-language SFT (MiniCPM-V) under DeepSpeed ZeRO-3: the model runs its vision tower only
when the sample carries an image, so a rank holding a text-only batch skips it.

Thread: https://github.com/modelscope/ms-swift/pull/9639 ("Fix: MiniCPM-V 4.6 training hangs on
text-only samples with DeepSpeed"); the same hang is reported in OpenBMB/MiniCPM-V#644.
Project: modelscope/ms-swift
What hung: under ZeRO-3 a submodule's forward all-gathers its partitioned parameters. "When one GPU
processes a text-only sample (no vision compute) while another processes an image sample (needs
vision parameters), the all-gather synchronization deadlocks -- one side never triggers the gather
that the other side is waiting for."
Fix (the PR): on a text-only batch, run a minimal dummy image through the vision tower and the
merger and add `image_embeds.mean() * 0.` to the text embeddings, so every rank issues the same
gathers and the result is unchanged.
Expected rankcheck finding: RC101 on the `self.vision_tower(...)` call, reached only on ranks whose
batch has images (a branch on per-rank data around a ZeRO-3 forward).
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
        if pixel_values is not None:
            vision_out = self.vision_tower(pixel_values, image_grid)  # expect: RC101
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
