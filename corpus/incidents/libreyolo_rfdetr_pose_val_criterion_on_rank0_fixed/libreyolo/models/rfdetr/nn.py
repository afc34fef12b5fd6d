"""RF-DETR model wrapper of LibreYOLO and the builder of its training criterion (trimmed: the
DINOv2 backbone and deformable decoder are reduced to a stand-in head).

Part of the reconstruction of https://github.com/LibreYOLO/libreyolo/pull/349; see
libreyolo/training/trainer.py for the incident description.
"""
from types import SimpleNamespace
from typing import Any

import torch
import torch.nn as nn

from .loss import SetCriterion
from .matcher import build_matcher


def build_criterion_and_postprocessors(args: Any):
    matcher = build_matcher(args)
    weight_dict = {"loss_ce": args.cls_loss_coef, "loss_bbox": args.bbox_loss_coef}
    if getattr(args, "keypoint_head", False):
        weight_dict["loss_keypoints_l1"] = args.keypoint_l1_loss_coef
        weight_dict["loss_keypoints_vis"] = args.keypoint_vis_loss_coef
    if args.aux_loss:
        aux_weight_dict = {}
        for i in range(args.dec_layers - 1):
            aux_weight_dict.update({k + f"_{i}": v for k, v in weight_dict.items()})
        weight_dict.update(aux_weight_dict)

    losses = ["labels", "boxes"]
    if getattr(args, "keypoint_head", False):
        losses.append("keypoints")

    criterion = SetCriterion(
        args.num_classes + 1,
        matcher=matcher,
        weight_dict=weight_dict,
        focal_alpha=args.focal_alpha,
        losses=losses,
        group_detr=args.group_detr,
        sum_group_losses=getattr(args, "sum_group_losses", False),
        num_keypoints=getattr(args, "num_keypoints", 17),
    )
    criterion.to(torch.device(args.device))
    return criterion, None


class _DetrHead(nn.Module):
    def __init__(self, hidden_dim: int, num_queries: int, num_classes: int, num_keypoints: int):
        super().__init__()
        self.query = nn.Embedding(num_queries, hidden_dim)
        self.proj = nn.Conv2d(3, hidden_dim, kernel_size=16, stride=16)
        self.class_embed = nn.Linear(hidden_dim, num_classes)
        self.bbox_embed = nn.Linear(hidden_dim, 4)
        self.keypoint_head = nn.Linear(hidden_dim, num_keypoints * 3)
        self.num_keypoints = num_keypoints

    def forward(self, x, targets=None):
        feats = self.proj(x).flatten(2).mean(-1)
        hs = self.query.weight.unsqueeze(0) + feats.unsqueeze(1)
        return {
            "pred_logits": self.class_embed(hs),
            "pred_boxes": self.bbox_embed(hs).sigmoid(),
            "pred_keypoints": self.keypoint_head(hs).view(hs.shape[0], hs.shape[1], self.num_keypoints, 3),
        }


class LibreRFDETRModel(nn.Module):
    """RF-DETR model built from LibreYOLO-local RF-DETR modules."""

    def __init__(self, config: str = "s", nb_classes: int = 80, device: str = "cpu", pose: bool = False, num_keypoints: int = 17):
        super().__init__()
        self.nb_classes = nb_classes
        self.pose = pose
        self.num_keypoints = int(num_keypoints)
        self.args = SimpleNamespace(
            num_classes=nb_classes,
            device=device,
            keypoint_head=pose,
            num_keypoints=num_keypoints,
            cls_loss_coef=1.0,
            bbox_loss_coef=5.0,
            keypoint_l1_loss_coef=10.0,
            keypoint_vis_loss_coef=1.0,
            set_cost_class=2.0,
            set_cost_bbox=5.0,
            focal_alpha=0.25,
            aux_loss=False,
            dec_layers=3,
            group_detr=13,
        )
        self.model = _DetrHead(hidden_dim=256, num_queries=300, num_classes=nb_classes + 1, num_keypoints=num_keypoints)

    def forward(self, x: torch.Tensor, targets=None):
        return self.model(x, targets=targets)

    def build_criterion_and_postprocess(self):
        return build_criterion_and_postprocessors(self.args)
