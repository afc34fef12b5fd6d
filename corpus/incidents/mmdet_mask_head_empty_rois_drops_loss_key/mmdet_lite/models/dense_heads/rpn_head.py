"""Region proposal network head (mmdet/models/dense_heads/rpn_head.py), single level (C4)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision.ops import batched_nms, box_iou

from ...core import bbox2delta, delta2bbox


class RPNHead(nn.Module):
    def __init__(self, in_channels: int, proposal_cfg: dict, feat_channels: int = 512, stride: int = 16,
                 scales=(2, 4, 8, 16, 32), ratios=(0.5, 1.0, 2.0)):
        super().__init__()
        self.stride = stride
        self.proposal_cfg = proposal_cfg
        base = torch.tensor([[s * stride * r ** -0.5, s * stride * r ** 0.5] for s in scales for r in ratios])
        self.register_buffer("base_wh", base, persistent=False)
        self.num_anchors = base.size(0)
        self.rpn_conv = nn.Conv2d(in_channels, feat_channels, 3, padding=1)
        self.rpn_cls = nn.Conv2d(feat_channels, self.num_anchors, 1)
        self.rpn_reg = nn.Conv2d(feat_channels, self.num_anchors * 4, 1)

    def anchors(self, feat_h: int, feat_w: int, device) -> torch.Tensor:
        ys = (torch.arange(feat_h, device=device) + 0.5) * self.stride
        xs = (torch.arange(feat_w, device=device) + 0.5) * self.stride
        cy, cx = torch.meshgrid(ys, xs, indexing="ij")
        centers = torch.stack([cx, cy], dim=-1).reshape(-1, 1, 2)
        wh = self.base_wh.to(device).reshape(1, -1, 2)
        return torch.cat([centers - wh / 2, centers + wh / 2], dim=-1).reshape(-1, 4)

    def forward(self, x):
        feat = F.relu(self.rpn_conv(x))
        return self.rpn_cls(feat), self.rpn_reg(feat)

    def _targets(self, anchors, gt_bboxes):
        labels = anchors.new_full((anchors.size(0),), -1)
        bbox_targets = anchors.new_zeros(anchors.shape)
        if gt_bboxes.numel() == 0:
            labels[torch.randperm(anchors.size(0), device=anchors.device)[:256]] = 0
            return labels, bbox_targets
        ious = box_iou(gt_bboxes, anchors)
        max_iou, argmax = ious.max(dim=0)
        labels[max_iou < 0.3] = 0
        labels[max_iou >= 0.7] = 1
        labels[ious.argmax(dim=1)] = 1
        pos = torch.nonzero(labels == 1, as_tuple=False).squeeze(1)
        neg = torch.nonzero(labels == 0, as_tuple=False).squeeze(1)
        if pos.numel() > 128:
            labels[pos[torch.randperm(pos.numel(), device=pos.device)[128:]]] = -1
        keep_neg = 256 - min(pos.numel(), 128)
        if neg.numel() > keep_neg:
            labels[neg[torch.randperm(neg.numel(), device=neg.device)[keep_neg:]]] = -1
        pos = labels == 1
        bbox_targets[pos] = bbox2delta(anchors[pos], gt_bboxes[argmax[pos]], stds=(1.0, 1.0, 1.0, 1.0))
        return labels, bbox_targets

    def forward_train(self, x, img_metas, gt_bboxes):
        cls_score, bbox_pred = self(x)
        n, _, h, w = cls_score.shape
        anchors = self.anchors(h, w, x.device)
        cls_score = cls_score.permute(0, 2, 3, 1).reshape(n, -1)
        bbox_pred = bbox_pred.permute(0, 2, 3, 1).reshape(n, -1, 4)
        loss_cls, loss_bbox = [], []
        for i in range(n):
            labels, targets = self._targets(anchors, gt_bboxes[i])
            valid = labels >= 0
            loss_cls.append(F.binary_cross_entropy_with_logits(cls_score[i][valid], labels[valid].float()))
            pos = labels == 1
            if pos.any():
                loss_bbox.append(F.l1_loss(bbox_pred[i][pos], targets[pos]))
            else:
                loss_bbox.append(bbox_pred[i].sum() * 0)
        losses = dict(loss_rpn_cls=loss_cls, loss_rpn_bbox=loss_bbox)
        with torch.no_grad():
            proposal_list = self._get_proposals(cls_score, bbox_pred, anchors, img_metas)
        return losses, proposal_list

    def _get_proposals(self, cls_score, bbox_pred, anchors, img_metas):
        cfg = self.proposal_cfg
        proposal_list = []
        for i, meta in enumerate(img_metas):
            scores = cls_score[i].sigmoid()
            topk = scores.topk(min(cfg["nms_pre"], scores.numel())).indices
            boxes = delta2bbox(anchors[topk], bbox_pred[i][topk], stds=(1.0, 1.0, 1.0, 1.0),
                               max_shape=meta["img_shape"])
            keep = batched_nms(boxes, scores[topk], torch.zeros_like(topk), cfg["nms_thr"])
            proposal_list.append(boxes[keep[: cfg["max_per_img"]]])
        return proposal_list

    def simple_test_rpn(self, x, img_metas):
        cls_score, bbox_pred = self(x)
        n, _, h, w = cls_score.shape
        anchors = self.anchors(h, w, x.device)
        return self._get_proposals(cls_score.permute(0, 2, 3, 1).reshape(n, -1),
                                   bbox_pred.permute(0, 2, 3, 1).reshape(n, -1, 4), anchors, img_metas)
