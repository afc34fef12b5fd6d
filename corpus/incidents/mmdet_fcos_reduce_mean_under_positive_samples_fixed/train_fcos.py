"""Distributed training script of the custom FCOS detector (one process per GPU, torchrun)."""
import argparse
import json
import logging
import os

import torch
import torch.distributed as dist
from mmcv.runner import get_dist_info
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
from torchvision.io import read_image

from fcos.detector import FCOS, parse_losses

logger = logging.getLogger("fcos")


class CocoStyleDataset(Dataset):
    """Images plus xyxy boxes; `filter_empty_gt=False` keeps images without annotations."""

    def __init__(self, ann_file, img_prefix, filter_empty_gt=False, size=(800, 1333)):
        with open(ann_file) as f:
            self.infos = json.load(f)
        if filter_empty_gt:
            self.infos = [info for info in self.infos if info["boxes"]]
        self.img_prefix = img_prefix
        self.size = size

    def __len__(self):
        return len(self.infos)

    def __getitem__(self, idx):
        info = self.infos[idx]
        img = read_image(os.path.join(self.img_prefix, info["file_name"])).float()
        img = torch.nn.functional.interpolate(img[None], size=self.size, mode="bilinear")[0]
        boxes = torch.tensor(info["boxes"], dtype=torch.float32).reshape(-1, 4)
        labels = torch.tensor(info["labels"], dtype=torch.long)
        return img, boxes, labels


def collate(batch):
    imgs, boxes, labels = zip(*batch)
    return torch.stack(imgs), list(boxes), list(labels)


def parse_args():
    parser = argparse.ArgumentParser(description="Train a custom FCOS detector")
    parser.add_argument("--ann-file", required=True)
    parser.add_argument("--img-prefix", required=True)
    parser.add_argument("--num-classes", type=int, default=10)
    parser.add_argument("--samples-per-gpu", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--work-dir", default="work_dirs/fcos")
    return parser.parse_args()


def main():
    args = parse_args()
    dist.init_process_group(backend="nccl")
    rank, world_size = get_dist_info()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)

    dataset = CocoStyleDataset(args.ann_file, args.img_prefix, filter_empty_gt=False)
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True)
    loader = DataLoader(dataset, batch_size=args.samples_per_gpu, sampler=sampler, num_workers=2,
                        collate_fn=collate)

    model = FCOS(args.num_classes).cuda()
    model = DistributedDataParallel(model, device_ids=[local_rank], find_unused_parameters=False)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        for i, (imgs, gt_bboxes, gt_labels) in enumerate(loader):
            imgs = imgs.cuda(non_blocking=True)
            gt_bboxes = [b.cuda() for b in gt_bboxes]
            gt_labels = [lbl.cuda() for lbl in gt_labels]
            losses = model(imgs, gt_bboxes, gt_labels)
            loss, log_vars = parse_losses(losses)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=35)
            optimizer.step()
            if rank == 0 and i % 50 == 0:
                logger.info("epoch %d iter %d %s", epoch, i, log_vars)
        if rank == 0:
            os.makedirs(args.work_dir, exist_ok=True)
            torch.save(model.module.state_dict(), os.path.join(args.work_dir, f"epoch_{epoch + 1}.pth"))
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    main()
