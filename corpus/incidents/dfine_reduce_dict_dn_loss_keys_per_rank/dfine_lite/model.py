"""A small DETR-style detector with contrastive denoising (DN) queries, after D-FINE's decoder.

In training, ground-truth boxes of the batch are noised into extra DN queries; when no image of the batch has
an annotation, `get_contrastive_denoising_training_group` has nothing to noise and no DN queries are built.
"""

import torch
import torch.nn as nn
import torchvision


def get_contrastive_denoising_training_group(targets, num_classes, num_queries, class_embed, num_denoising=100,
                                             label_noise_ratio=0.5, box_noise_scale=1.0):
    num_gts = [len(t["labels"]) for t in targets]
    device = targets[0]["labels"].device
    max_gt_num = max(num_gts)
    if max_gt_num == 0:
        dn_meta = {"dn_positive_idx": None, "dn_num_group": 0, "dn_num_split": [0, num_queries]}
        return None, None, None, dn_meta

    num_group = max(num_denoising // max_gt_num, 1)
    bs = len(num_gts)
    input_query_class = torch.full([bs, max_gt_num], num_classes, dtype=torch.int64, device=device)
    input_query_bbox = torch.zeros([bs, max_gt_num, 4], device=device)
    pad_gt_mask = torch.zeros([bs, max_gt_num], dtype=torch.bool, device=device)
    for i in range(bs):
        if num_gts[i] > 0:
            input_query_class[i, :num_gts[i]] = targets[i]["labels"]
            input_query_bbox[i, :num_gts[i]] = targets[i]["boxes"]
            pad_gt_mask[i, :num_gts[i]] = True
    input_query_class = input_query_class.tile([1, 2 * num_group])
    input_query_bbox = input_query_bbox.tile([1, 2 * num_group, 1])
    pad_gt_mask = pad_gt_mask.tile([1, 2 * num_group])

    if label_noise_ratio > 0:
        noise = torch.rand_like(input_query_class, dtype=torch.float) < (label_noise_ratio * 0.5)
        new_label = torch.randint_like(input_query_class, 0, num_classes)
        input_query_class = torch.where(noise & pad_gt_mask, new_label, input_query_class)
    if box_noise_scale > 0:
        diff = torch.cat([input_query_bbox[..., 2:] * 0.5, input_query_bbox[..., 2:]], dim=-1) * box_noise_scale
        input_query_bbox = (input_query_bbox + (torch.rand_like(input_query_bbox) * 2 - 1) * diff).clamp(0, 1)

    positive = torch.zeros([bs, max_gt_num * 2], dtype=torch.bool, device=device)
    positive[:, :max_gt_num] = True
    positive = positive.tile([1, num_group]) & pad_gt_mask
    dn_positive_idx = torch.nonzero(positive)[:, 1]
    dn_positive_idx = torch.split(dn_positive_idx, [n * num_group for n in num_gts])
    num_dn = max_gt_num * 2 * num_group

    input_query_logits = class_embed(input_query_class)
    attn_mask = torch.zeros(num_dn + num_queries, num_dn + num_queries, dtype=torch.bool, device=device)
    attn_mask[num_dn:, :num_dn] = True
    dn_meta = {"dn_positive_idx": dn_positive_idx, "dn_num_group": num_group, "dn_num_split": [num_dn, num_queries]}
    return input_query_logits, input_query_bbox, attn_mask, dn_meta


class DFineLite(nn.Module):
    def __init__(self, num_classes=80, hidden_dim=256, num_queries=300, num_layers=6, num_denoising=100):
        super().__init__()
        backbone = torchvision.models.resnet50(weights=None)
        self.backbone = nn.Sequential(*list(backbone.children())[:-2])
        self.input_proj = nn.Conv2d(2048, hidden_dim, 1)
        self.query_embed = nn.Embedding(num_queries, hidden_dim)
        self.query_pos = nn.Embedding(num_queries, 4)
        self.denoising_class_embed = nn.Embedding(num_classes + 1, hidden_dim, padding_idx=num_classes)
        self.dn_bbox_proj = nn.Linear(4, hidden_dim)
        layer = nn.TransformerDecoderLayer(hidden_dim, 8, 1024, batch_first=True)
        self.decoder = nn.TransformerDecoder(layer, num_layers)
        self.class_head = nn.Linear(hidden_dim, num_classes)
        self.bbox_head = nn.Sequential(nn.Linear(hidden_dim, hidden_dim), nn.ReLU(), nn.Linear(hidden_dim, 4))
        self.num_classes, self.num_queries, self.num_denoising = num_classes, num_queries, num_denoising

    def forward(self, images, targets=None):
        memory = self.input_proj(self.backbone(images)).flatten(2).transpose(1, 2)
        bs = images.shape[0]
        queries = self.query_embed.weight.unsqueeze(0).expand(bs, -1, -1)
        attn_mask, dn_meta = None, None
        if self.training and self.num_denoising > 0 and targets is not None:
            dn_logits, dn_bbox, attn_mask, dn_meta = get_contrastive_denoising_training_group(
                targets, self.num_classes, self.num_queries, self.denoising_class_embed,
                num_denoising=self.num_denoising,
            )
            if dn_logits is not None:
                queries = torch.cat([dn_logits + self.dn_bbox_proj(dn_bbox), queries], dim=1)
        hs = self.decoder(queries, memory, tgt_mask=attn_mask)
        logits, boxes = self.class_head(hs), self.bbox_head(hs).sigmoid()
        if dn_meta is not None and dn_meta["dn_num_group"] > 0:
            num_dn, _ = dn_meta["dn_num_split"]
            out = {"pred_logits": logits[:, num_dn:], "pred_boxes": boxes[:, num_dn:],
                   "dn_outputs": {"pred_logits": logits[:, :num_dn], "pred_boxes": boxes[:, :num_dn]},
                   "dn_meta": dn_meta}
        else:
            out = {"pred_logits": logits, "pred_boxes": boxes}
        return out
