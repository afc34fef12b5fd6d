"""FCN mask head (mmdet/models/roi_heads/mask_heads/fcn_mask_head.py): 4 convs, deconv, per-class
28x28 mask logits; targets are the ground-truth masks cropped to each positive box."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision.ops import roi_align


class FCNMaskHead(nn.Module):
    def __init__(self, in_channels: int, num_classes: int, conv_channels: int = 256, mask_size: int = 28):
        super().__init__()
        self.num_classes = num_classes
        self.mask_size = mask_size
        convs = []
        for i in range(4):
            convs += [nn.Conv2d(in_channels if i == 0 else conv_channels, conv_channels, 3, padding=1),
                      nn.ReLU(inplace=True)]
        self.convs = nn.Sequential(*convs)
        self.upsample = nn.ConvTranspose2d(conv_channels, conv_channels, 2, stride=2)
        self.conv_logits = nn.Conv2d(conv_channels, num_classes, 1)

    def forward(self, x):
        x = self.convs(x)
        x = F.relu(self.upsample(x))
        return self.conv_logits(x)

    def get_targets(self, sampling_results, gt_masks, rcnn_train_cfg):
        targets = []
        for res, masks in zip(sampling_results, gt_masks):
            if res.pos_bboxes.size(0) == 0:
                targets.append(res.pos_bboxes.new_zeros((0, self.mask_size, self.mask_size)))
                continue
            inds = res.pos_assigned_gt_inds
            rois = torch.cat([torch.arange(inds.numel(), device=inds.device, dtype=res.pos_bboxes.dtype)[:, None],
                              res.pos_bboxes], dim=1)
            crops = roi_align(masks[inds][:, None].float(), rois, (self.mask_size, self.mask_size), 1.0, 0, True)
            targets.append((crops[:, 0] >= 0.5).float())
        return torch.cat(targets)

    def loss(self, mask_pred, mask_targets, labels):
        loss = dict()
        num_rois = mask_pred.size(0)
        inds = torch.arange(num_rois, dtype=torch.long, device=mask_pred.device)
        pred_slice = mask_pred[inds, labels]
        loss["loss_mask"] = F.binary_cross_entropy_with_logits(pred_slice, mask_targets, reduction="mean")
        return loss
