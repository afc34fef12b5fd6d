"""detr-shaped loss reduction: the criterion builds its loss dict from the losses the
configuration names, each loss method returning a mapping of constant keys (`{"loss_ce": ce}`, or
an empty dict filled key by key), dispatched through a table of bound methods and merged with
`losses.update(...)`. `reduce_dict` stacks one 0-dim value per key in key order and all-reduces
them: every rank has the same keys, only what they hold differs.
"""
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn


class SetCriterion(nn.Module):
    def __init__(self, num_classes, losses):
        super().__init__()
        self.num_classes = num_classes
        self.losses = losses

    def loss_labels(self, outputs, targets, num_boxes):
        loss_ce = F.cross_entropy(outputs["pred_logits"], targets["labels"])
        return {"loss_ce": loss_ce}

    def loss_boxes(self, outputs, targets, num_boxes):
        loss_bbox = F.l1_loss(outputs["pred_boxes"], targets["boxes"], reduction="none")
        losses = {}
        losses["loss_bbox"] = loss_bbox.sum() / num_boxes
        return losses

    def get_loss(self, loss, outputs, targets, num_boxes):
        loss_map = {"labels": self.loss_labels, "boxes": self.loss_boxes}
        return loss_map[loss](outputs, targets, num_boxes)

    def forward(self, outputs, targets):
        num_boxes = max(len(targets["boxes"]), 1)
        losses = {}
        for loss in self.losses:
            losses.update(self.get_loss(loss, outputs, targets, num_boxes))
        return losses


def reduce_dict(input_dict):
    with torch.no_grad():
        names = []
        values = []
        for k in sorted(input_dict.keys()):
            names.append(k)
            values.append(input_dict[k])
        values = torch.stack(values, dim=0)
        dist.all_reduce(values)
        values /= dist.get_world_size()
    return {k: v for k, v in zip(names, values)}


def train_one_epoch(model, criterion, data_loader, optimizer):
    for samples, targets in data_loader:
        outputs = model(samples)
        loss_dict = criterion(outputs, targets)
        loss = sum(loss_dict.values())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print({k: v.item() for k, v in reduce_dict(loss_dict).items()})


def main():
    dist.init_process_group("gloo")
    model = nn.Linear(4, 4)
    criterion = SetCriterion(3, ["labels", "boxes"])
    loader = torch.utils.data.DataLoader(list(range(8)), batch_size=2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_one_epoch(model, criterion, loader, optimizer)
