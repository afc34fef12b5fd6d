"""Distributed training of a Mask R-CNN (R-50-C4, 1x) on a custom COCO-format instance-segmentation
dataset in which part of the images carry no annotation, as with MMDetection 2.4's tools/train.py
(`./tools/dist_train.sh configs/mask_rcnn/mask_rcnn_r50_caffe_c4_1x_custom.py 8`), one or two images
per GPU.

Thread: https://github.com/open-mmlab/mmdetection/issues/3563 ("A possible solution to the training
stuck problem"), fixed by https://github.com/open-mmlab/mmdetection/pull/3713 ("[Fix]: fix mask rcnn
training stuck problem when there is no positive rois", merged)
Project: open-mmlab/mmdetection (mmdet/models/roi_heads/standard_roi_head.py,
mmdet/models/detectors/base.py)
What hung: the reporter, training Mask R-CNN on multiple GPUs with 1 or 2 images per GPU: "after some
iterations the training program always stuck without any output and the GPU usage keeps 100%". His
diagnosis: `_mask_forward_train` returns `dict(loss_mask=None)` when `pos_rois.shape[0] == 0` and
`forward_train` then leaves "loss_mask" out of the losses, "so if the loss dict from different GPUs
have different keys, the program will be stuck" in `_parse_losses`, which all-reduces every log
variable in a loop. A rank whose images have no ground truth gets no positive RoI (the sampler can
only add ground-truth boxes it has), its loss dict has one key fewer, and its loop issues one
all-reduce fewer: its all-reduce of the total `loss` pairs with the others' `loss_mask`, it goes on to
the backward (DDP's gradient all-reduce) while the others wait in the all-reduce of their `loss`.
Fix (the PR, merged, with mmcv's empty-tensor-capable Conv/RoIAlign wrappers): the mask branch runs
on an empty set of RoIs too, `FCNMaskHead.loss` returns `mask_pred.sum() * 0` for it, and
`forward_train` always adds "loss_mask", so every rank has the same keys in the same order.
Expected rankcheck finding: RC103 on the loop of `_parse_losses`
(mmdet_lite/models/detectors/base.py) that all-reduces one log variable per key of a loss dict whose
key set is decided by this rank's batch.
(Trimmed: FPN, the caffe-style backbone, the mmcv config system, hooks other than the optimizer,
checkpoint and text logger ones, evaluation. Inferred: a COCO-format dataset with unannotated
images kept (`filter_empty_gt=False`), as in the related mmdetection#2193, where
only `filter_empty_gt=False` made dist_train hang; the reporter states only 1-2 images per GPU.)
"""
import argparse
import logging
import os

import numpy as np
import torch
import torch.distributed as dist
from PIL import Image
from pycocotools import mask as mask_utils
from pycocotools.coco import COCO
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

from mmdet_lite.models import build_detector
from mmdet_lite.parallel import MMDistributedDataParallel
from mmdet_lite.runner import EpochBasedRunner

IMG_MEAN = np.array([103.530, 116.280, 123.675], dtype=np.float32)

model_cfg = dict(
    type="MaskRCNN",
    num_classes=3,
    pretrained=True,
    train_cfg=dict(
        rpn_proposal=dict(nms_pre=12000, max_per_img=2000, nms_thr=0.7),
        rcnn=dict(assigner=dict(pos_iou_thr=0.5, neg_iou_thr=0.5),
                  sampler=dict(num=512, pos_fraction=0.25)),
    ),
    test_cfg=dict(rpn=dict(nms_pre=6000, max_per_img=1000, nms_thr=0.7)),
)


class CocoInstanceDataset(Dataset):
    """COCO-format instances; images without annotation are kept unless `filter_empty_gt`."""

    def __init__(self, ann_file, img_prefix, img_scale=(1333, 800), filter_empty_gt=False):
        self.coco = COCO(ann_file)
        self.cat_ids = sorted(self.coco.getCatIds())
        self.cat2label = {cat_id: i for i, cat_id in enumerate(self.cat_ids)}
        self.img_ids = sorted(self.coco.getImgIds())
        if filter_empty_gt:
            self.img_ids = [i for i in self.img_ids if self.coco.getAnnIds(imgIds=[i], iscrowd=False)]
        self.img_prefix = img_prefix
        self.img_scale = img_scale

    def __len__(self):
        return len(self.img_ids)

    def __getitem__(self, idx):
        img_id = self.img_ids[idx]
        info = self.coco.loadImgs([img_id])[0]
        img = Image.open(os.path.join(self.img_prefix, info["file_name"])).convert("RGB")
        scale = min(self.img_scale[0] / max(img.size), self.img_scale[1] / min(img.size))
        new_w, new_h = int(img.width * scale + 0.5), int(img.height * scale + 0.5)
        img = img.resize((new_w, new_h), Image.BILINEAR)
        arr = np.asarray(img, dtype=np.float32)[:, :, ::-1] - IMG_MEAN
        anns = self.coco.loadAnns(self.coco.getAnnIds(imgIds=[img_id], iscrowd=False))
        boxes, labels, masks = [], [], []
        for ann in anns:
            x, y, w, h = ann["bbox"]
            if w < 1 or h < 1:
                continue
            boxes.append([x * scale, y * scale, (x + w) * scale, (y + h) * scale])
            labels.append(self.cat2label[ann["category_id"]])
            rle = mask_utils.frPyObjects(ann["segmentation"], info["height"], info["width"])
            m = mask_utils.decode(mask_utils.merge(rle) if isinstance(rle, list) else rle)
            masks.append(np.asarray(Image.fromarray(m).resize((new_w, new_h), Image.NEAREST)))
        return dict(
            img=torch.from_numpy(arr.copy()).permute(2, 0, 1),
            img_metas=dict(img_shape=(new_h, new_w), scale_factor=scale, ori_filename=info["file_name"]),
            gt_bboxes=torch.tensor(boxes, dtype=torch.float32).reshape(-1, 4),
            gt_labels=torch.tensor(labels, dtype=torch.long),
            gt_masks=(torch.from_numpy(np.stack(masks)) if masks
                      else torch.zeros((0, new_h, new_w), dtype=torch.uint8)),
        )


def collate(batch, size_divisor=32):
    max_h = max(s["img"].shape[1] for s in batch)
    max_w = max(s["img"].shape[2] for s in batch)
    max_h = (max_h + size_divisor - 1) // size_divisor * size_divisor
    max_w = (max_w + size_divisor - 1) // size_divisor * size_divisor
    imgs = batch[0]["img"].new_zeros((len(batch), 3, max_h, max_w))
    masks = []
    for i, s in enumerate(batch):
        imgs[i, :, : s["img"].shape[1], : s["img"].shape[2]] = s["img"]
        m = s["gt_masks"].new_zeros((s["gt_masks"].shape[0], max_h, max_w))
        m[:, : s["gt_masks"].shape[1], : s["gt_masks"].shape[2]] = s["gt_masks"]
        masks.append(m)
    return dict(img=imgs, img_metas=[s["img_metas"] for s in batch],
                gt_bboxes=[s["gt_bboxes"] for s in batch], gt_labels=[s["gt_labels"] for s in batch],
                gt_masks=masks)


def to_device(batch, device):
    out = dict(batch)
    out["img"] = batch["img"].to(device, non_blocking=True)
    for key in ("gt_bboxes", "gt_labels", "gt_masks"):
        out[key] = [t.to(device, non_blocking=True) for t in batch[key]]
    return out


class DeviceLoader:
    def __init__(self, loader, device):
        self.loader, self.device = loader, device

    def __len__(self):
        return len(self.loader)

    def __iter__(self):
        for batch in self.loader:
            yield to_device(batch, self.device)


def parse_args():
    parser = argparse.ArgumentParser(description="Train a Mask R-CNN detector")
    parser.add_argument("--ann-file", default="data/custom/annotations/instances_train.json")
    parser.add_argument("--img-prefix", default="data/custom/train/")
    parser.add_argument("--work-dir", default="work_dirs/mask_rcnn_r50_c4_1x_custom")
    parser.add_argument("--samples-per-gpu", type=int, default=1)
    parser.add_argument("--workers-per-gpu", type=int, default=2)
    parser.add_argument("--lr", type=float, default=0.02)
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s - %(name)s - %(levelname)s - %(message)s")
    dist.init_process_group(backend="nccl")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    torch.manual_seed(args.seed + rank)
    os.makedirs(args.work_dir, exist_ok=True)

    dataset = CocoInstanceDataset(args.ann_file, args.img_prefix, filter_empty_gt=False)
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=args.seed)
    loader = DataLoader(dataset, batch_size=args.samples_per_gpu, sampler=sampler,
                        num_workers=args.workers_per_gpu, collate_fn=collate, pin_memory=True)

    model = build_detector(model_cfg).to(device)
    model = MMDistributedDataParallel(model, device_ids=[local_rank], broadcast_buffers=False,
                                      find_unused_parameters=True)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(params, lr=args.lr * world_size * args.samples_per_gpu / 16, momentum=0.9,
                                weight_decay=1e-4)

    runner = EpochBasedRunner(model, optimizer, args.work_dir, max_epochs=args.epochs, log_interval=50,
                              grad_clip=None)
    runner.run(DeviceLoader(loader, device), sampler)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
