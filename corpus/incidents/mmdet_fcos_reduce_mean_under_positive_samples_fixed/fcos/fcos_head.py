"""Safe twin of mmdet_fcos_reduce_mean_under_positive_samples: as in the merged fix of
mmdetection#4923, the positive targets, their centerness and the centerness normaliser
(`reduce_mean` of its sum) are computed before `if len(pos_inds) > 0:`, on every rank; a rank
without positive points all-reduces a zero sum and only the loss terms stay under the branch.

Thread: https://github.com/open-mmlab/mmdetection/issues/4724 (fix: https://github.com/open-mmlab/mmdetection/pull/4923)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from mmcv.cnn import ConvModule, Scale, bias_init_with_prob, normal_init
from torchvision.ops import generalized_box_iou_loss, sigmoid_focal_loss

from fcos.dist_utils import reduce_mean

INF = 1e8


def distance2bbox(points, distance):
    x1 = points[:, 0] - distance[:, 0]
    y1 = points[:, 1] - distance[:, 1]
    x2 = points[:, 0] + distance[:, 2]
    y2 = points[:, 1] + distance[:, 3]
    return torch.stack([x1, y1, x2, y2], -1)


class FCOSHead(nn.Module):
    def __init__(self, num_classes, in_channels, feat_channels=256, stacked_convs=4,
                 strides=(8, 16, 32, 64, 128),
                 regress_ranges=((-1, 64), (64, 128), (128, 256), (256, 512), (512, INF))):
        super().__init__()
        self.num_classes = num_classes
        self.strides = strides
        self.regress_ranges = regress_ranges
        norm_cfg = dict(type="GN", num_groups=32, requires_grad=True)
        self.cls_convs = nn.ModuleList(
            [ConvModule(in_channels if i == 0 else feat_channels, feat_channels, 3, padding=1, norm_cfg=norm_cfg)
             for i in range(stacked_convs)])
        self.reg_convs = nn.ModuleList(
            [ConvModule(in_channels if i == 0 else feat_channels, feat_channels, 3, padding=1, norm_cfg=norm_cfg)
             for i in range(stacked_convs)])
        self.fcos_cls = nn.Conv2d(feat_channels, num_classes, 3, padding=1)
        self.fcos_reg = nn.Conv2d(feat_channels, 4, 3, padding=1)
        self.fcos_centerness = nn.Conv2d(feat_channels, 1, 3, padding=1)
        self.scales = nn.ModuleList([Scale(1.0) for _ in strides])

    def init_weights(self):
        for m in list(self.cls_convs) + list(self.reg_convs):
            normal_init(m.conv, std=0.01)
        normal_init(self.fcos_cls, std=0.01, bias=bias_init_with_prob(0.01))
        normal_init(self.fcos_reg, std=0.01)
        normal_init(self.fcos_centerness, std=0.01)

    def forward(self, feats):
        cls_scores, bbox_preds, centernesses = [], [], []
        for x, scale in zip(feats, self.scales):
            cls_feat, reg_feat = x, x
            for layer in self.cls_convs:
                cls_feat = layer(cls_feat)
            for layer in self.reg_convs:
                reg_feat = layer(reg_feat)
            cls_scores.append(self.fcos_cls(cls_feat))
            centernesses.append(self.fcos_centerness(cls_feat))
            bbox_preds.append(scale(self.fcos_reg(reg_feat)).float().exp())
        return cls_scores, bbox_preds, centernesses

    def get_points(self, featmap_sizes, dtype, device):
        points = []
        for (h, w), stride in zip(featmap_sizes, self.strides):
            ys, xs = torch.meshgrid(torch.arange(0, h * stride, stride, dtype=dtype, device=device),
                                    torch.arange(0, w * stride, stride, dtype=dtype, device=device),
                                    indexing="ij")
            points.append(torch.stack((xs.reshape(-1), ys.reshape(-1)), dim=-1) + stride // 2)
        return points

    def _get_target_single(self, gt_bboxes, gt_labels, points, regress_ranges):
        num_points, num_gts = points.size(0), gt_labels.size(0)
        if num_gts == 0:
            return gt_labels.new_full((num_points,), self.num_classes), gt_bboxes.new_zeros((num_points, 4))
        areas = ((gt_bboxes[:, 2] - gt_bboxes[:, 0]) * (gt_bboxes[:, 3] - gt_bboxes[:, 1]))[None].repeat(num_points, 1)
        xs, ys = points[:, 0][:, None], points[:, 1][:, None]
        left, right = xs - gt_bboxes[None, :, 0], gt_bboxes[None, :, 2] - xs
        top, bottom = ys - gt_bboxes[None, :, 1], gt_bboxes[None, :, 3] - ys
        bbox_targets = torch.stack((left, top, right, bottom), -1)
        inside_gt_bbox_mask = bbox_targets.min(-1)[0] > 0
        max_regress_distance = bbox_targets.max(-1)[0]
        inside_regress_range = ((max_regress_distance >= regress_ranges[:, None, 0])
                                & (max_regress_distance <= regress_ranges[:, None, 1]))
        areas[inside_gt_bbox_mask == 0] = INF
        areas[inside_regress_range == 0] = INF
        min_area, min_area_inds = areas.min(dim=1)
        labels = gt_labels[min_area_inds]
        labels[min_area == INF] = self.num_classes  # background
        return labels, bbox_targets[range(num_points), min_area_inds]

    def get_targets(self, points, gt_bboxes_list, gt_labels_list):
        num_points = [p.size(0) for p in points]
        regress_ranges = torch.cat([points[i].new_tensor(self.regress_ranges[i])[None].expand_as(points[i])
                                    for i in range(len(points))])
        concat_points = torch.cat(points)
        labels, bbox_targets = [], []
        for gt_bboxes, gt_labels in zip(gt_bboxes_list, gt_labels_list):
            lbl, tgt = self._get_target_single(gt_bboxes, gt_labels, concat_points, regress_ranges)
            labels.append(lbl.split(num_points))
            bbox_targets.append(tgt.split(num_points))
        return ([torch.cat([lbl[i] for lbl in labels]) for i in range(len(points))],
                [torch.cat([tgt[i] for tgt in bbox_targets]) for i in range(len(points))])

    def centerness_target(self, pos_bbox_targets):
        left_right = pos_bbox_targets[:, [0, 2]]
        top_bottom = pos_bbox_targets[:, [1, 3]]
        centerness = (left_right.min(dim=-1)[0] / left_right.max(dim=-1)[0]) * (
            top_bottom.min(dim=-1)[0] / top_bottom.max(dim=-1)[0])
        return torch.sqrt(centerness)

    def loss(self, cls_scores, bbox_preds, centernesses, gt_bboxes, gt_labels):
        featmap_sizes = [f.size()[-2:] for f in cls_scores]
        all_level_points = self.get_points(featmap_sizes, bbox_preds[0].dtype, bbox_preds[0].device)
        labels, bbox_targets = self.get_targets(all_level_points, gt_bboxes, gt_labels)

        num_imgs = cls_scores[0].size(0)
        flatten_cls_scores = torch.cat([s.permute(0, 2, 3, 1).reshape(-1, self.num_classes) for s in cls_scores])
        flatten_bbox_preds = torch.cat([b.permute(0, 2, 3, 1).reshape(-1, 4) for b in bbox_preds])
        flatten_centerness = torch.cat([c.permute(0, 2, 3, 1).reshape(-1) for c in centernesses])
        flatten_labels = torch.cat(labels)
        flatten_bbox_targets = torch.cat(bbox_targets)
        flatten_points = torch.cat([p.repeat(num_imgs, 1) for p in all_level_points])

        bg_class_ind = self.num_classes
        pos_inds = ((flatten_labels >= 0) & (flatten_labels < bg_class_ind)).nonzero().reshape(-1)
        num_pos = torch.tensor(len(pos_inds), dtype=torch.float, device=bbox_preds[0].device)
        num_pos = max(reduce_mean(num_pos), 1.0)
        onehot = F.one_hot(flatten_labels, bg_class_ind + 1)[:, :bg_class_ind].float()
        loss_cls = sigmoid_focal_loss(flatten_cls_scores, onehot, reduction="sum") / num_pos

        pos_bbox_preds = flatten_bbox_preds[pos_inds]
        pos_centerness = flatten_centerness[pos_inds]

        pos_bbox_targets = flatten_bbox_targets[pos_inds]
        pos_centerness_targets = self.centerness_target(pos_bbox_targets)
        # centerness weighted iou loss
        centerness_denorm = max(reduce_mean(pos_centerness_targets.sum().detach()), 1e-6)

        if len(pos_inds) > 0:
            pos_points = flatten_points[pos_inds]
            pos_decoded_bbox_preds = distance2bbox(pos_points, pos_bbox_preds)
            pos_decoded_target_preds = distance2bbox(pos_points, pos_bbox_targets)
            loss_bbox = (generalized_box_iou_loss(pos_decoded_bbox_preds, pos_decoded_target_preds,
                                                  reduction="none") * pos_centerness_targets).sum() / centerness_denorm
            loss_centerness = F.binary_cross_entropy_with_logits(
                pos_centerness, pos_centerness_targets, reduction="sum") / num_pos
        else:
            loss_bbox = pos_bbox_preds.sum()
            loss_centerness = pos_centerness.sum()

        return dict(loss_cls=loss_cls, loss_bbox=loss_bbox, loss_centerness=loss_centerness)
