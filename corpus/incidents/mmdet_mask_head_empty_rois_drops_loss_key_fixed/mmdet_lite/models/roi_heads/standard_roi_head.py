"""Standard RoI head (mmdet/models/roi_heads/standard_roi_head.py, after open-mmlab/mmdetection#3713):
assigns and samples the proposals, runs the bbox branch on all sampled RoIs and the mask branch on
the positive ones -- also when there are none, so that every rank reports a `loss_mask`."""
import torch
import torch.nn as nn
from torchvision.ops import roi_align

from ...core import assign_and_sample, bbox2roi, delta2bbox
from .bbox_head import BBoxHead
from .mask_head import FCNMaskHead


class StandardRoIHead(nn.Module):
    def __init__(self, in_channels: int, num_classes: int, train_cfg: dict, with_mask: bool = True):
        super().__init__()
        self.train_cfg = train_cfg
        self.bbox_head = BBoxHead(in_channels, num_classes)
        self.mask_head = FCNMaskHead(in_channels, num_classes) if with_mask else None
        self.share_roi_extractor = False

    @property
    def with_mask(self):
        return self.mask_head is not None

    def _roi_extract(self, x, rois, out_size):
        return roi_align(x, rois, (out_size, out_size), spatial_scale=1.0 / 16, sampling_ratio=0, aligned=True)

    def forward_train(self, x, img_metas, proposal_list, gt_bboxes, gt_labels, gt_bboxes_ignore=None,
                      gt_masks=None, **kwargs):
        sampling_cfg = self.train_cfg["sampler"]
        sampling_results = [
            assign_and_sample(proposal_list[i], gt_bboxes[i], gt_labels[i],
                              pos_iou_thr=self.train_cfg["assigner"]["pos_iou_thr"],
                              neg_iou_thr=self.train_cfg["assigner"]["neg_iou_thr"],
                              num=sampling_cfg["num"], pos_fraction=sampling_cfg["pos_fraction"])
            for i in range(len(img_metas))
        ]

        losses = dict()
        bbox_results = self._bbox_forward_train(x, sampling_results)
        losses.update(bbox_results["loss_bbox"])

        if self.with_mask:
            mask_results = self._mask_forward_train(x, sampling_results, bbox_results["bbox_feats"], gt_masks,
                                                    img_metas)
            losses.update(mask_results["loss_mask"])
        return losses

    def _bbox_forward_train(self, x, sampling_results):
        rois = bbox2roi([res.bboxes for res in sampling_results])
        bbox_feats = self._roi_extract(x, rois, 7)
        cls_score, bbox_pred = self.bbox_head(bbox_feats)
        labels, bbox_targets, pos_mask = self.bbox_head.get_targets(sampling_results)
        loss_bbox = self.bbox_head.loss(cls_score, bbox_pred, labels, bbox_targets, pos_mask)
        return dict(cls_score=cls_score, bbox_pred=bbox_pred, bbox_feats=bbox_feats, loss_bbox=loss_bbox)

    def _mask_forward_train(self, x, sampling_results, bbox_feats, gt_masks, img_metas):
        # empty-tensor-capable RoIAlign and convs: zero positive RoIs give a (0, C, 28, 28) prediction
        pos_rois = bbox2roi([res.pos_bboxes for res in sampling_results])
        mask_results = self._mask_forward(x, pos_rois)
        mask_targets = self.mask_head.get_targets(sampling_results, gt_masks, self.train_cfg)
        pos_labels = torch.cat([res.pos_gt_labels for res in sampling_results])
        loss_mask = self.mask_head.loss(mask_results["mask_pred"], mask_targets, pos_labels)
        mask_results.update(loss_mask=loss_mask, mask_targets=mask_targets)
        return mask_results

    def _mask_forward(self, x, rois):
        mask_feats = self._roi_extract(x, rois, 14)
        mask_pred = self.mask_head(mask_feats)
        return dict(mask_pred=mask_pred, mask_feats=mask_feats)

    @torch.no_grad()
    def simple_test(self, x, proposal_list, img_metas, rescale=False):
        results = []
        for i, (proposals, meta) in enumerate(zip(proposal_list, img_metas)):
            rois = bbox2roi([proposals])
            rois[:, 0] = i
            cls_score, bbox_pred = self.bbox_head(self._roi_extract(x, rois, 7))
            scores = cls_score.softmax(dim=1)[:, :-1]
            boxes = delta2bbox(proposals, bbox_pred, max_shape=meta["img_shape"])
            results.append((boxes, scores))
        return results
