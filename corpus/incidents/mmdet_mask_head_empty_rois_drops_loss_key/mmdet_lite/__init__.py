"""A trimmed copy of the parts of MMDetection 2.4 (open-mmlab/mmdetection, mmdet/*, August 2020) and of
the mmcv runner it drives that a Mask R-CNN training run goes through: the detector base class with
`train_step`/`_parse_losses`, the two-stage detector, the RPN, the standard RoI head with its bbox and
FCN mask heads, the distributed wrapper and the epoch-based runner."""
