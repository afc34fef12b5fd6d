"""Data helpers: pre-encoded latents with tokenized captions, and a frozen text encoder."""
import functools

import torch
from datasets import load_from_disk
from torch.utils.data import DataLoader
from transformers import CLIPTextModel


@functools.lru_cache(maxsize=1)
def _text_encoder(device):
    enc = CLIPTextModel.from_pretrained("openai/clip-vit-large-patch14").to(device)
    enc.requires_grad_(False)
    return enc


@torch.no_grad()
def encode_prompts(input_ids, device):
    return _text_encoder(device)(input_ids.to(device))[0]


def build_train_dataloader(data_dir, batch_size):
    ds = load_from_disk(data_dir).with_format("torch", columns=["latents", "input_ids"])
    return DataLoader(ds, batch_size=batch_size, shuffle=True, num_workers=4, drop_last=True)
