"""Two-stage detector (mmdet/models/detectors/two_stage.py, mask_rcnn.py): backbone, RPN, RoI head."""
import torch.nn as nn
import torchvision

from ..dense_heads.rpn_head import RPNHead
from ..roi_heads.standard_roi_head import StandardRoIHead
from .base import BaseDetector


class ResNetC4(nn.Module):
    """ResNet-50 trunk up to conv4 (stride 16), frozen stem as in the 1x schedules."""

    def __init__(self, pretrained: bool = True):
        super().__init__()
        weights = torchvision.models.ResNet50_Weights.IMAGENET1K_V1 if pretrained else None
        resnet = torchvision.models.resnet50(weights=weights)
        self.stem = nn.Sequential(resnet.conv1, resnet.bn1, resnet.relu, resnet.maxpool)
        self.layers = nn.Sequential(resnet.layer1, resnet.layer2, resnet.layer3)
        for p in self.stem.parameters():
            p.requires_grad_(False)
        self.out_channels = 1024

    def forward(self, x):
        return self.layers(self.stem(x))


class MaskRCNN(BaseDetector):
    def __init__(self, num_classes: int, train_cfg: dict, test_cfg: dict, pretrained: bool = True):
        super().__init__()
        self.backbone = ResNetC4(pretrained)
        self.rpn_head = RPNHead(self.backbone.out_channels, train_cfg["rpn_proposal"])
        self.roi_head = StandardRoIHead(self.backbone.out_channels, num_classes, train_cfg["rcnn"])
        self.train_cfg = train_cfg
        self.test_cfg = test_cfg

    def extract_feat(self, imgs):
        return self.backbone(imgs)

    def forward_train(self, img, img_metas, gt_bboxes, gt_labels, gt_bboxes_ignore=None, gt_masks=None,
                      proposals=None, **kwargs):
        x = self.extract_feat(img)
        losses = dict()
        rpn_losses, proposal_list = self.rpn_head.forward_train(x, img_metas, gt_bboxes)
        losses.update(rpn_losses)
        roi_losses = self.roi_head.forward_train(x, img_metas, proposal_list, gt_bboxes, gt_labels,
                                                 gt_bboxes_ignore, gt_masks, **kwargs)
        losses.update(roi_losses)
        return losses

    def simple_test(self, img, img_metas, proposals=None, rescale=False):
        x = self.extract_feat(img)
        proposal_list = self.rpn_head.simple_test_rpn(x, img_metas)
        return self.roi_head.simple_test(x, proposal_list, img_metas, rescale=rescale)
