"""LLaVA-style vision-language fine-tuning under PyTorch FSDP: the model's input preparation returns
the text embeddings early when the batch carries no images, so a rank whose batch is text-only
never runs the vision encoder or the projector.

Thread: https://github.com/huggingface/transformers/issues/37186 ("Quen FSDP model training hangs
when some batches do not contain images")
Project: huggingface/transformers (a Qwen vision-language model trained with FSDP)
What hung: training on a mix of image and text-only samples; on a step where one rank's batch has
no image its forward skips the vision encoder, whose FSDP units then never all-gather their shards
on that rank while the ranks with images wait in those all-gathers.
Fix (the thread's workaround, confirmed by the reporter): give every text-only batch a dummy image
(with the image tokens the model expects) so every rank runs the vision encoder each step.
Expected rankcheck finding: RC102 on the early `return` taken on ranks whose batch has no images,
before the vision encoder's forward that the other ranks run.
Inferred: the thread uses the Hugging Face model; the reconstruction keeps the same control flow in
a project-defined wrapper (the LLaVA layout), trained with a plain FSDP loop.
"""
import argparse
import functools

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp.wrap import size_based_auto_wrap_policy


class Projector(nn.Module):
    def __init__(self, vision_dim: int, text_dim: int):
        super().__init__()
        self.fc1 = nn.Linear(vision_dim, text_dim)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(text_dim, text_dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class VisionLanguageModel(nn.Module):
    def __init__(self, language_model, vision_encoder, vision_dim: int, text_dim: int, image_token_id: int):
        super().__init__()
        self.language_model = language_model
        self.vision_encoder = vision_encoder
        self.projector = Projector(vision_dim, text_dim)
        self.image_token_id = image_token_id

    def prepare_inputs_for_multimodal(self, input_ids, images=None):
        embeds = self.language_model.get_input_embeddings()(input_ids)
        if images is None:
            # No image in this batch: a blank one keeps the vision encoder's all-gathers in step
            # with the ranks that have images; its embeddings are added times zero.
            blank = torch.zeros(1, 3, 224, 224, device=embeds.device, dtype=embeds.dtype)
            dummy = self.projector(self.vision_encoder(blank).last_hidden_state)
            return embeds + dummy.mean() * 0.0
        features = self.vision_encoder(images).last_hidden_state
        image_embeds = self.projector(features).flatten(0, 1)
        positions = (input_ids == self.image_token_id).unsqueeze(-1).expand_as(embeds)
        return embeds.masked_scatter(positions, image_embeds.to(embeds.dtype))

    def forward(self, input_ids, attention_mask, labels, images=None):
        embeds = self.prepare_inputs_for_multimodal(input_ids, images)
        return self.language_model(inputs_embeds=embeds, attention_mask=attention_mask, labels=labels)


def main(language_model, vision_encoder, loader):
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=1e-5)
    parser.add_argument("--image_token_id", type=int, default=151655)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
    model = VisionLanguageModel(language_model, vision_encoder, 1280, 3584, args.image_token_id)
    model = FSDP(model, auto_wrap_policy=functools.partial(size_based_auto_wrap_policy, min_num_params=int(1e6)),
                 device_id=torch.cuda.current_device())
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for batch in loader:
        out = model(
            input_ids=batch["input_ids"].cuda(),
            attention_mask=batch["attention_mask"].cuda(),
            labels=batch["labels"].cuda(),
            images=batch.get("images"),
        )
        out.loss.backward()
        optimizer.step()
        optimizer.zero_grad()
