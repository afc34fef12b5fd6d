"""A reduced CT-CLIP: a 3D volume encoder, a text encoder and the symmetric contrastive loss."""
import torch
import torch.nn.functional as F
from torch import nn


class SmallVolumeEncoder(nn.Module):
    def __init__(self, dim=512):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv3d(1, 32, kernel_size=4, stride=4),
            nn.GELU(),
            nn.Conv3d(32, 64, kernel_size=4, stride=4),
            nn.GELU(),
            nn.AdaptiveAvgPool3d((2, 2, 2)),
        )
        self.proj = nn.Linear(64 * 8, dim)

    def forward(self, volume):
        x = self.stem(volume)
        return self.proj(x.flatten(1))


class SmallTextEncoder(nn.Module):
    def __init__(self, vocab_size, dim=768, depth=4, heads=8):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        layer = nn.TransformerEncoderLayer(dim, heads, dim * 4, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, depth)

    def forward(self, input_ids, attention_mask):
        x = self.embed(input_ids)
        x = self.encoder(x, src_key_padding_mask=attention_mask == 0)
        return x[:, 0]


class CTCLIP(nn.Module):
    def __init__(self, image_encoder, text_encoder, dim_image, dim_text, dim_latent=512, temperature=1.0):
        super().__init__()
        self.visual_transformer = image_encoder
        self.text_transformer = text_encoder
        self.to_visual_latent = nn.Linear(dim_image, dim_latent, bias=False)
        self.to_text_latent = nn.Linear(dim_text, dim_latent, bias=False)
        self.temperature = nn.Parameter(torch.tensor(temperature))

    def forward(self, text, image, device, return_loss=False):
        text_embeds = self.text_transformer(text.input_ids, text.attention_mask)
        image_embeds = self.visual_transformer(image)
        text_latents = F.normalize(self.to_text_latent(text_embeds), dim=-1)
        image_latents = F.normalize(self.to_visual_latent(image_embeds), dim=-1)
        temp = self.temperature.exp()
        if not return_loss:
            return (text_latents * image_latents).sum(-1) * temp
        sim = text_latents @ image_latents.t() * temp
        labels = torch.arange(sim.size(0), device=device)
        return (F.cross_entropy(sim, labels) + F.cross_entropy(sim.t(), labels)) / 2
