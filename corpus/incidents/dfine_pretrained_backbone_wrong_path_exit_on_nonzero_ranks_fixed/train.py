"""Training entry point (torchrun --nproc_per_node=N train.py -c config.json)."""
import argparse
import json

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset, DistributedSampler

from dfine import dist_utils
from dfine.model import DFINE


class CocoLikeDetection(Dataset):
    """Images and targets pre-packed as a list of .pt samples ({'image', 'labels', 'boxes'})."""

    def __init__(self, index_file):
        with open(index_file, "r") as f:
            self.files = [line.strip() for line in f if line.strip()]

    def __len__(self):
        return len(self.files)

    def __getitem__(self, idx):
        return torch.load(self.files[idx])


def collate(batch):
    return torch.stack([b["image"] for b in batch]), [{"labels": b["labels"], "boxes": b["boxes"]} for b in batch]


def simple_criterion(outputs, targets):
    # first-K matching stand-in for the Hungarian matcher of D-FINE
    loss_cls = outputs["pred_logits"].new_zeros(())
    loss_box = outputs["pred_boxes"].new_zeros(())
    for logits, boxes, tgt in zip(outputs["pred_logits"], outputs["pred_boxes"], targets):
        k = len(tgt["labels"])
        target_cls = torch.full((logits.shape[0],), logits.shape[1] - 1, device=logits.device, dtype=torch.long)
        target_cls[:k] = tgt["labels"].to(logits.device)
        loss_cls = loss_cls + F.cross_entropy(logits, target_cls)
        if k:
            loss_box = loss_box + F.l1_loss(boxes[:k], tgt["boxes"].to(boxes.device))
    return {"loss_vfl": loss_cls / len(targets), "loss_bbox": loss_box / len(targets)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("-c", "--config", required=True)
    args = parser.parse_args()
    with open(args.config) as f:
        cfg = json.load(f)

    dist_utils.setup_distributed(cfg.get("seed", 0))
    device = torch.device("cuda")

    model = DFINE(cfg["backbone"], cfg["num_classes"], pretrained=True).to(device)
    model = dist_utils.warp_model(model, sync_bn=cfg.get("sync_bn", True), find_unused_parameters=True)

    dataset = CocoLikeDetection(cfg["train_index"])
    sampler = DistributedSampler(dataset) if dist_utils.is_dist_available_and_initialized() else None
    loader = DataLoader(dataset, batch_size=cfg["batch_size"], sampler=sampler, shuffle=sampler is None, collate_fn=collate, num_workers=4)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=cfg["lr"], weight_decay=1e-4)

    for epoch in range(cfg["epochs"]):
        if sampler is not None:
            sampler.set_epoch(epoch)
        model.train()
        for step, (images, targets) in enumerate(loader):
            outputs = model(images.to(device))
            losses = simple_criterion(outputs, targets)
            loss = sum(losses.values())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            logged = dist_utils.reduce_dict({k: v.detach() for k, v in losses.items()})
            if dist_utils.get_rank() == 0 and step % 50 == 0:
                print(f"epoch {epoch} step {step} " + " ".join(f"{k}={v.item():.4f}" for k, v in logged.items()))


if __name__ == "__main__":
    main()
