"""Two shared FC layers + cls/reg branches (mmdet/models/roi_heads/bbox_heads/convfc_bbox_head.py)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from ...core import bbox2delta


class BBoxHead(nn.Module):
    def __init__(self, in_channels: int, num_classes: int, roi_feat_size: int = 7, fc_channels: int = 1024):
        super().__init__()
        self.num_classes = num_classes
        self.shared_fcs = nn.Sequential(
            nn.Flatten(), nn.Linear(in_channels * roi_feat_size * roi_feat_size, fc_channels), nn.ReLU(inplace=True),
            nn.Linear(fc_channels, fc_channels), nn.ReLU(inplace=True))
        self.fc_cls = nn.Linear(fc_channels, num_classes + 1)
        self.fc_reg = nn.Linear(fc_channels, 4)

    def forward(self, bbox_feats):
        x = self.shared_fcs(bbox_feats)
        return self.fc_cls(x), self.fc_reg(x)

    def get_targets(self, sampling_results):
        labels, bbox_targets, pos_mask = [], [], []
        for res in sampling_results:
            num_pos, num_neg = res.pos_bboxes.size(0), res.neg_bboxes.size(0)
            lbl = res.pos_bboxes.new_full((num_pos + num_neg,), self.num_classes, dtype=torch.long)
            lbl[:num_pos] = res.pos_gt_labels
            tgt = res.pos_bboxes.new_zeros((num_pos + num_neg, 4))
            if num_pos > 0:
                tgt[:num_pos] = bbox2delta(res.pos_bboxes, res.pos_gt_bboxes)
            mask = torch.zeros(num_pos + num_neg, dtype=torch.bool, device=lbl.device)
            mask[:num_pos] = True
            labels.append(lbl)
            bbox_targets.append(tgt)
            pos_mask.append(mask)
        return torch.cat(labels), torch.cat(bbox_targets), torch.cat(pos_mask)

    def loss(self, cls_score, bbox_pred, labels, bbox_targets, pos_mask):
        losses = dict()
        losses["loss_cls"] = F.cross_entropy(cls_score, labels)
        losses["acc"] = (cls_score.argmax(dim=1) == labels).float().mean() * 100
        if pos_mask.any():
            losses["loss_bbox"] = F.smooth_l1_loss(bbox_pred[pos_mask], bbox_targets[pos_mask], beta=1.0)
        else:
            losses["loss_bbox"] = bbox_pred[pos_mask].sum()
        return losses
