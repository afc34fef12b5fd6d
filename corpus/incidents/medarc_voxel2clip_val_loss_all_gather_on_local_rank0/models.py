"""voxel2clip backbone and a frozen CLIP image embedder (stand-in for the project's Clipper)."""
import torch
import torch.nn as nn


class BrainNetwork(nn.Module):
    """MLP mapping flattened nsdgeneral voxels to a CLIP-sized embedding."""

    def __init__(self, in_dim=15724, out_dim=768, h=2048, n_blocks=4):
        super().__init__()
        self.lin0 = nn.Sequential(nn.Linear(in_dim, h), nn.LayerNorm(h), nn.GELU(), nn.Dropout(0.5))
        self.blocks = nn.ModuleList(
            [nn.Sequential(nn.Linear(h, h), nn.LayerNorm(h), nn.GELU(), nn.Dropout(0.15)) for _ in range(n_blocks)]
        )
        self.lin1 = nn.Linear(h, out_dim)

    def forward(self, x):
        x = self.lin0(x)
        for block in self.blocks:
            x = x + block(x)
        return self.lin1(x)


class Clipper(nn.Module):
    """Frozen image encoder returning CLIP-space targets."""

    def __init__(self, out_dim=768, device="cuda"):
        super().__init__()
        self.encoder = nn.Sequential(nn.AdaptiveAvgPool2d(16), nn.Flatten(), nn.Linear(3 * 16 * 16, out_dim)).to(device)
        for p in self.encoder.parameters():
            p.requires_grad_(False)

    @torch.no_grad()
    def embed_image(self, image):
        return self.encoder(image)
