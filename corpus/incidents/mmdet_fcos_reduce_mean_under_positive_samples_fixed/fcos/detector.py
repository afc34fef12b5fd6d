"""Single-stage FCOS detector: mmdet ResNet-50 + FPN, the local FCOS head."""
from collections import OrderedDict

import torch
import torch.distributed as dist
import torch.nn as nn
from mmdet.models.backbones import ResNet
from mmdet.models.necks import FPN

from fcos.fcos_head import FCOSHead


class FCOS(nn.Module):
    def __init__(self, num_classes: int):
        super().__init__()
        self.backbone = ResNet(depth=50, num_stages=4, out_indices=(0, 1, 2, 3), frozen_stages=1,
                               norm_cfg=dict(type="BN", requires_grad=False), norm_eval=True, style="caffe")
        self.neck = FPN(in_channels=[256, 512, 1024, 2048], out_channels=256, start_level=1,
                        add_extra_convs="on_output", num_outs=5, relu_before_extra_convs=True)
        self.bbox_head = FCOSHead(num_classes=num_classes, in_channels=256)
        self.bbox_head.init_weights()

    def extract_feat(self, img):
        return self.neck(self.backbone(img))

    def forward(self, img, gt_bboxes, gt_labels):
        """Training forward: returns the loss dict (mmdet's `forward_train`)."""
        outs = self.bbox_head(self.extract_feat(img))
        return self.bbox_head.loss(*outs, gt_bboxes, gt_labels)


def parse_losses(losses):
    """mmdet BaseDetector._parse_losses: sum the loss terms, all-reduce each log var."""
    log_vars = OrderedDict()
    for loss_name, loss_value in losses.items():
        log_vars[loss_name] = loss_value.mean()
    loss = sum(v for k, v in log_vars.items() if "loss" in k)
    log_vars["loss"] = loss
    for loss_name, loss_value in log_vars.items():
        if dist.is_available() and dist.is_initialized():
            loss_value = loss_value.data.clone()
            dist.all_reduce(loss_value.div_(dist.get_world_size()))
        log_vars[loss_name] = loss_value.item()
    return loss, log_vars
