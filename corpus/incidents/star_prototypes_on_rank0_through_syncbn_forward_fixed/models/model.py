"""A reduced DeepLabV3 (ResNet-ish encoder + ASPP + per-task 1x1 classifiers) for incremental
semantic segmentation. BatchNorm layers are converted to SyncBatchNorm by the launcher."""
from functools import reduce

import torch
import torch.nn as nn
import torch.nn.functional as F


def conv_bn(in_ch, out_ch, stride=1, dilation=1):
    return nn.Sequential(
        nn.Conv2d(in_ch, out_ch, 3, stride=stride, padding=dilation, dilation=dilation, bias=False),
        nn.BatchNorm2d(out_ch),
        nn.ReLU(inplace=True),
    )


class Encoder(nn.Module):
    def __init__(self, width=64):
        super().__init__()
        self.stages = nn.Sequential(
            conv_bn(3, width, stride=2),
            conv_bn(width, width * 2, stride=2),
            conv_bn(width * 2, width * 4, stride=2),
            conv_bn(width * 4, width * 8, stride=2, dilation=1),
            conv_bn(width * 8, width * 8, dilation=2),
        )
        self.out_channels = width * 8

    def forward(self, x):
        return self.stages(x)


class ASPP(nn.Module):
    def __init__(self, in_ch, out_ch=256, rates=(6, 12, 18)):
        super().__init__()
        self.branches = nn.ModuleList([nn.Sequential(nn.Conv2d(in_ch, out_ch, 1, bias=False), nn.BatchNorm2d(out_ch), nn.ReLU(inplace=True))])
        for r in rates:
            self.branches.append(conv_bn(in_ch, out_ch, dilation=r))
        self.project = nn.Sequential(nn.Conv2d(out_ch * (len(rates) + 1), out_ch, 1, bias=False), nn.BatchNorm2d(out_ch), nn.ReLU(inplace=True))

    def forward(self, x):
        return self.project(torch.cat([b(x) for b in self.branches], dim=1))


class DeepLabV3(nn.Module):
    def __init__(self, classes, width=64, use_cosine=False):
        super().__init__()
        self.classes = classes
        self.tot_classes = reduce(lambda a, b: a + b, classes)
        self.backbone = Encoder(width)
        self.aspp = ASPP(self.backbone.out_channels, 256)
        self.cls = nn.ModuleList([nn.Conv2d(256, c, kernel_size=1, bias=not use_cosine) for c in classes])

    def freeze_bn(self, affine_freeze=False):
        for m in self.backbone.modules():
            if isinstance(m, nn.modules.batchnorm._BatchNorm):
                m.eval()
                if affine_freeze:
                    for p in m.parameters():
                        p.requires_grad = False

    def get_backbone_params(self):
        return self.backbone.parameters()

    def get_aspp_params(self):
        return self.aspp.parameters()

    def get_classifer_params(self):
        return self.cls.parameters()

    def forward(self, x, ret_intermediate=False):
        out_size = x.shape[-2:]
        feats = self.backbone(x)
        x_pl = self.aspp(feats)
        logits_small = torch.cat([head(x_pl) for head in self.cls], dim=1)
        logits = F.interpolate(logits_small, size=out_size, mode="bilinear", align_corners=False)
        if ret_intermediate:
            return logits, [feats, x_pl], {}
        return logits, None, {}
