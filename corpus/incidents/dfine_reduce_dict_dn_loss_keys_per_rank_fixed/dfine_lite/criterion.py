"""Set criterion with matching and denoising losses (after D-FINE's DFINECriterion, trimmed)."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from scipy.optimize import linear_sum_assignment
from torchvision.ops import box_convert, generalized_box_iou

from dfine_lite import dist_utils


class HungarianMatcher(nn.Module):
    def __init__(self, cost_class=2.0, cost_bbox=5.0, cost_giou=2.0):
        super().__init__()
        self.cost_class, self.cost_bbox, self.cost_giou = cost_class, cost_bbox, cost_giou

    @torch.no_grad()
    def forward(self, outputs, targets):
        bs, num_queries = outputs["pred_logits"].shape[:2]
        prob = outputs["pred_logits"].flatten(0, 1).sigmoid()
        boxes = outputs["pred_boxes"].flatten(0, 1)
        tgt_ids = torch.cat([t["labels"] for t in targets])
        tgt_boxes = torch.cat([t["boxes"] for t in targets])
        if tgt_ids.numel() == 0:
            empty = torch.as_tensor([], dtype=torch.int64)
            return [(empty, empty) for _ in range(bs)]
        cost = (self.cost_class * -prob[:, tgt_ids] + self.cost_bbox * torch.cdist(boxes, tgt_boxes, p=1)
                - self.cost_giou * generalized_box_iou(box_convert(boxes, "cxcywh", "xyxy"),
                                                       box_convert(tgt_boxes, "cxcywh", "xyxy")))
        cost = cost.view(bs, num_queries, -1).cpu()
        sizes = [len(t["boxes"]) for t in targets]
        indices = [linear_sum_assignment(c[i]) for i, c in enumerate(cost.split(sizes, -1))]
        return [(torch.as_tensor(i, dtype=torch.int64), torch.as_tensor(j, dtype=torch.int64)) for i, j in indices]


class DFINECriterion(nn.Module):
    def __init__(self, num_classes=80, weight_dict=None, losses=("vfl", "boxes")):
        super().__init__()
        self.num_classes = num_classes
        self.matcher = HungarianMatcher()
        self.weight_dict = weight_dict or {"loss_vfl": 1.0, "loss_bbox": 5.0, "loss_giou": 2.0}
        self.losses = losses
        self.loss_names = {"vfl": ("loss_vfl",), "boxes": ("loss_bbox", "loss_giou")}

    def loss_labels_vfl(self, outputs, targets, indices, num_boxes):
        logits = outputs["pred_logits"]
        idx = self._get_src_permutation_idx(indices)
        target_classes = torch.full(logits.shape[:2], self.num_classes, dtype=torch.int64, device=logits.device)
        target_classes[idx] = torch.cat([t["labels"][j] for t, (_, j) in zip(targets, indices)])
        target = F.one_hot(target_classes, self.num_classes + 1)[..., :-1].float()
        loss = F.binary_cross_entropy_with_logits(logits, target, reduction="none")
        return {"loss_vfl": loss.mean(1).sum() * logits.shape[1] / num_boxes}

    def loss_boxes(self, outputs, targets, indices, num_boxes):
        idx = self._get_src_permutation_idx(indices)
        src_boxes = outputs["pred_boxes"][idx]
        target_boxes = torch.cat([t["boxes"][j] for t, (_, j) in zip(targets, indices)], dim=0)
        loss_bbox = F.l1_loss(src_boxes, target_boxes, reduction="none").sum() / num_boxes
        giou = torch.diag(generalized_box_iou(box_convert(src_boxes, "cxcywh", "xyxy"),
                                              box_convert(target_boxes, "cxcywh", "xyxy")))
        return {"loss_bbox": loss_bbox, "loss_giou": (1 - giou).sum() / num_boxes}

    def get_loss(self, loss, outputs, targets, indices, num_boxes):
        return {"vfl": self.loss_labels_vfl, "boxes": self.loss_boxes}[loss](outputs, targets, indices, num_boxes)

    @staticmethod
    def _get_src_permutation_idx(indices):
        batch_idx = torch.cat([torch.full_like(src, i) for i, (src, _) in enumerate(indices)])
        src_idx = torch.cat([src for (src, _) in indices])
        return batch_idx, src_idx

    @staticmethod
    def get_cdn_matched_indices(dn_meta, targets):
        dn_positive_idx, dn_num_group = dn_meta["dn_positive_idx"], dn_meta["dn_num_group"]
        num_gts = [len(t["labels"]) for t in targets]
        device = targets[0]["labels"].device
        dn_match_indices = []
        for i, num_gt in enumerate(num_gts):
            if num_gt > 0:
                gt_idx = torch.arange(num_gt, dtype=torch.int64, device=device).tile(dn_num_group)
                dn_match_indices.append((dn_positive_idx[i], gt_idx))
            else:
                empty = torch.zeros(0, dtype=torch.int64, device=device)
                dn_match_indices.append((empty, empty))
        return dn_match_indices

    def forward(self, outputs, targets, **kwargs):
        num_boxes = sum(len(t["labels"]) for t in targets)
        num_boxes = torch.as_tensor([num_boxes], dtype=torch.float, device=outputs["pred_logits"].device)
        if dist_utils.is_dist_available_and_initialized():
            torch.distributed.all_reduce(num_boxes)
        num_boxes = torch.clamp(num_boxes / dist_utils.get_world_size(), min=1).item()

        losses = {}
        indices = self.matcher(outputs, targets)
        for loss in self.losses:
            l_dict = self.get_loss(loss, outputs, targets, indices, num_boxes)
            losses.update({k: l_dict[k] * self.weight_dict[k] for k in l_dict})

        # Denoising losses. A batch without any ground-truth box builds no DN queries; its DN losses are zeros,
        # so that every rank returns the same loss keys (reduce_dict all-reduces them stacked).
        if "dn_outputs" in outputs:
            dn_indices = self.get_cdn_matched_indices(outputs["dn_meta"], targets)
            dn_num_boxes = num_boxes * outputs["dn_meta"]["dn_num_group"]
            for loss in self.losses:
                l_dict = self.get_loss(loss, outputs["dn_outputs"], targets, dn_indices, dn_num_boxes)
                losses.update({k + "_dn": l_dict[k] * self.weight_dict[k] for k in l_dict})
        else:
            device = outputs["pred_logits"].device
            for loss in self.losses:
                for k in self.loss_names[loss]:
                    losses[k + "_dn"] = torch.tensor(0.0, device=device)

        return losses
