"""A D-FINE-shaped detector: HGNetv2 backbone, a light hybrid encoder and a query-based head."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from .backbone import HGNetv2


class HybridEncoder(nn.Module):
    def __init__(self, in_channels, hidden_dim=256):
        super().__init__()
        self.input_proj = nn.ModuleList(nn.Sequential(nn.Conv2d(c, hidden_dim, 1, bias=False), nn.BatchNorm2d(hidden_dim)) for c in in_channels)
        self.fuse = nn.Conv2d(hidden_dim, hidden_dim, 3, padding=1)

    def forward(self, feats):
        projected = [proj(f) for proj, f in zip(self.input_proj, feats)]
        top = projected[-1]
        for f in reversed(projected[:-1]):
            top = F.interpolate(top, size=f.shape[-2:], mode="nearest") + f
        return self.fuse(top)


class QueryHead(nn.Module):
    def __init__(self, num_classes, hidden_dim=256, num_queries=300):
        super().__init__()
        self.queries = nn.Embedding(num_queries, hidden_dim)
        self.attn = nn.MultiheadAttention(hidden_dim, 8, batch_first=True)
        self.cls = nn.Linear(hidden_dim, num_classes)
        self.box = nn.Linear(hidden_dim, 4)

    def forward(self, memory):
        b = memory.shape[0]
        mem = memory.flatten(2).transpose(1, 2)
        q = self.queries.weight.unsqueeze(0).expand(b, -1, -1)
        h, _ = self.attn(q, mem, mem)
        return {"pred_logits": self.cls(h), "pred_boxes": self.box(h).sigmoid()}


class DFINE(nn.Module):
    def __init__(self, backbone_name="B4", num_classes=80, pretrained=True):
        super().__init__()
        self.backbone = HGNetv2(backbone_name, pretrained=pretrained)
        self.encoder = HybridEncoder(self.backbone._out_channels[1:])
        self.decoder = QueryHead(num_classes)

    def forward(self, images):
        return self.decoder(self.encoder(self.backbone(images)))
