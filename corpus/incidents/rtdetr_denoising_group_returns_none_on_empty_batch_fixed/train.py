"""DDP training of an RT-DETR style ship detector (`torchrun --nproc_per_node 2 train.py -c
configs/rtdetrv2_r18vd_levir_ship.yml`); about half of the training images have no annotations."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, Dataset, DistributedSampler

from rtdetr_lite.decoder import RTDETRDecoder


class RTDETR(nn.Module):
    def __init__(self, num_classes, hidden_dim=256):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 64, 7, stride=4, padding=3), nn.BatchNorm2d(64), nn.ReLU(),
                                      nn.Conv2d(64, hidden_dim, 3, stride=4, padding=1))
        self.decoder = RTDETRDecoder(num_classes=num_classes, hidden_dim=hidden_dim)

    def forward(self, images, targets=None):
        memory = self.backbone(images).flatten(2).transpose(1, 2)
        return self.decoder(memory, targets)


def match_loss(logits, boxes, targets):
    """Classification against background plus L1 on the first queries (a stand-in for the matcher)."""
    cls_target = torch.zeros_like(logits)
    loss_bbox = logits.new_zeros(())
    for i, t in enumerate(targets):
        n = len(t["labels"])
        if n:
            cls_target[i, torch.arange(n, device=logits.device), t["labels"]] = 1.0
            loss_bbox = loss_bbox + F.l1_loss(boxes[i, :n], t["boxes"], reduction="sum")
    num_boxes = max(sum(len(t["labels"]) for t in targets), 1)
    return F.binary_cross_entropy_with_logits(logits, cls_target) + 5.0 * loss_bbox / num_boxes


def detection_loss(outputs, targets):
    loss = match_loss(outputs["pred_logits"], outputs["pred_boxes"], targets)
    loss = loss + match_loss(outputs["enc_outputs"]["pred_logits"], outputs["enc_outputs"]["pred_boxes"], targets)
    if "dn_aux_outputs" in outputs:
        dn_out, dn_meta = outputs["dn_aux_outputs"][0], outputs["dn_meta"]
        dn_target = torch.zeros_like(dn_out["pred_logits"])
        num_pos = 0
        for i, (t, idx) in enumerate(zip(targets, dn_meta["dn_positive_idx"])):
            if len(idx):
                dn_target[i, idx, t["labels"].repeat(dn_meta["dn_num_group"])] = 1.0
                num_pos += len(idx)
        # a dummy (all masked-out) group from an empty batch keeps the graph but weighs nothing
        loss = loss + F.binary_cross_entropy_with_logits(dn_out["pred_logits"], dn_target) * float(num_pos > 0)
    return loss


class LevirShip(Dataset):
    def __len__(self):
        return 2320

    def __getitem__(self, idx):
        n = 0 if idx % 2 else int(torch.randint(1, 6, ()))  # ~49% of the images have no ship
        boxes = torch.rand(n, 4) * 0.5 + 0.25
        return torch.randn(3, 512, 512), {"labels": torch.zeros(n, dtype=torch.int64), "boxes": boxes}


def collate(batch):
    return torch.stack([b[0] for b in batch]), [b[1] for b in batch]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("-c", "--config", default="configs/rtdetrv2_r18vd_levir_ship.yml")
    parser.add_argument("--epochs", type=int, default=72)
    parser.add_argument("--batch-size", type=int, default=4)
    args = parser.parse_args()

    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)

    dataset = LevirShip()
    sampler = DistributedSampler(dataset, shuffle=True)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, collate_fn=collate, drop_last=True)
    model = DistributedDataParallel(RTDETR(num_classes=1).to(device), device_ids=[local_rank],
                                    find_unused_parameters=False)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=1e-4)

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        for images, targets in loader:
            images = images.to(device)
            targets = [{k: v.to(device) for k, v in t.items()} for t in targets]
            outputs = model(images, targets)
            loss = detection_loss(outputs, targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
