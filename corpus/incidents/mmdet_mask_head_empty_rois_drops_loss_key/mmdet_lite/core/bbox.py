"""Box utilities (mmdet/core/bbox): RoI packing, delta coding, and a MaxIoU assigner with a random
sampler that adds the ground-truth boxes to the proposals (`add_gt_as_proposals=True`)."""
from dataclasses import dataclass
from typing import List

import torch
from torchvision.ops import box_iou


@dataclass
class SamplingResult:
    pos_bboxes: torch.Tensor
    neg_bboxes: torch.Tensor
    pos_gt_bboxes: torch.Tensor
    pos_gt_labels: torch.Tensor
    pos_assigned_gt_inds: torch.Tensor

    @property
    def bboxes(self) -> torch.Tensor:
        return torch.cat([self.pos_bboxes, self.neg_bboxes])


def bbox2roi(bbox_list: List[torch.Tensor]) -> torch.Tensor:
    """Convert a list of per-image boxes to (n, 5) rois `[batch_ind, x1, y1, x2, y2]`."""
    rois_list = []
    for img_id, bboxes in enumerate(bbox_list):
        img_inds = bboxes.new_full((bboxes.size(0), 1), img_id)
        rois_list.append(torch.cat([img_inds, bboxes[:, :4]], dim=-1))
    return torch.cat(rois_list, 0)


def bbox2delta(proposals: torch.Tensor, gt: torch.Tensor, stds=(0.1, 0.1, 0.2, 0.2)) -> torch.Tensor:
    pw, ph = proposals[:, 2] - proposals[:, 0], proposals[:, 3] - proposals[:, 1]
    px, py = proposals[:, 0] + 0.5 * pw, proposals[:, 1] + 0.5 * ph
    gw, gh = gt[:, 2] - gt[:, 0], gt[:, 3] - gt[:, 1]
    gx, gy = gt[:, 0] + 0.5 * gw, gt[:, 1] + 0.5 * gh
    deltas = torch.stack([(gx - px) / pw, (gy - py) / ph, torch.log(gw / pw), torch.log(gh / ph)], dim=-1)
    return deltas / deltas.new_tensor(stds)


def delta2bbox(rois: torch.Tensor, deltas: torch.Tensor, stds=(0.1, 0.1, 0.2, 0.2), max_shape=None):
    deltas = deltas * deltas.new_tensor(stds)
    pw, ph = rois[:, 2] - rois[:, 0], rois[:, 3] - rois[:, 1]
    px, py = rois[:, 0] + 0.5 * pw, rois[:, 1] + 0.5 * ph
    gx, gy = px + pw * deltas[:, 0], py + ph * deltas[:, 1]
    gw, gh = pw * deltas[:, 2].clamp(max=4.135).exp(), ph * deltas[:, 3].clamp(max=4.135).exp()
    boxes = torch.stack([gx - 0.5 * gw, gy - 0.5 * gh, gx + 0.5 * gw, gy + 0.5 * gh], dim=-1)
    if max_shape is not None:
        boxes[:, 0::2] = boxes[:, 0::2].clamp(0, max_shape[1])
        boxes[:, 1::2] = boxes[:, 1::2].clamp(0, max_shape[0])
    return boxes


def assign_and_sample(proposals: torch.Tensor, gt_bboxes: torch.Tensor, gt_labels: torch.Tensor,
                      pos_iou_thr: float = 0.5, neg_iou_thr: float = 0.5, num: int = 512,
                      pos_fraction: float = 0.25) -> SamplingResult:
    """MaxIoUAssigner + RandomSampler. An image without ground truth yields no positive at all."""
    if gt_bboxes.numel() > 0:
        proposals = torch.cat([gt_bboxes, proposals], dim=0)  # add_gt_as_proposals
        overlaps = box_iou(gt_bboxes, proposals)
        max_overlaps, argmax = overlaps.max(dim=0)
    else:
        max_overlaps = proposals.new_zeros(proposals.size(0))
        argmax = torch.zeros(proposals.size(0), dtype=torch.long, device=proposals.device)
    pos_inds = torch.nonzero(max_overlaps >= pos_iou_thr, as_tuple=False).squeeze(1)
    neg_inds = torch.nonzero(max_overlaps < neg_iou_thr, as_tuple=False).squeeze(1)
    num_pos = min(int(num * pos_fraction), pos_inds.numel())
    pos_inds = pos_inds[torch.randperm(pos_inds.numel(), device=pos_inds.device)[:num_pos]]
    neg_inds = neg_inds[torch.randperm(neg_inds.numel(), device=neg_inds.device)[:num - num_pos]]
    pos_assigned = argmax[pos_inds]
    return SamplingResult(
        pos_bboxes=proposals[pos_inds],
        neg_bboxes=proposals[neg_inds],
        pos_gt_bboxes=gt_bboxes[pos_assigned] if gt_bboxes.numel() > 0 else gt_bboxes.new_zeros((0, 4)),
        pos_gt_labels=gt_labels[pos_assigned] if gt_labels.numel() > 0 else gt_labels.new_zeros((0,)),
        pos_assigned_gt_inds=pos_assigned,
    )
