"""detr-shaped loss reduction where the criterion adds the box loss only when this rank's batch
has positive matches (`losses.update(self.loss_boxes(...))` under `if len(pos_inds) > 0:`, the
mmdetection idiom for an image without objects). A rank whose batch had none stacks one value fewer
in `reduce_dict`, and the all_reduce of the stacked tensor mismatches (or hangs) against the ranks
that had some.
"""
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn


class SetCriterion(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.num_classes = num_classes

    def loss_labels(self, outputs, targets):
        return {"loss_ce": F.cross_entropy(outputs["pred_logits"], targets["labels"])}

    def loss_boxes(self, outputs, targets, pos_inds):
        losses = {}
        losses["loss_bbox"] = F.l1_loss(outputs["pred_boxes"][pos_inds], targets["boxes"][pos_inds])
        return losses

    def forward(self, outputs, targets):
        losses = {}
        losses.update(self.loss_labels(outputs, targets))
        pos_inds = torch.nonzero(targets["labels"] > 0).squeeze(1)
        if len(pos_inds) > 0:
            losses.update(self.loss_boxes(outputs, targets, pos_inds))
        return losses


def reduce_dict(input_dict):
    with torch.no_grad():
        names = []
        values = []
        for k in sorted(input_dict.keys()):
            names.append(k)
            values.append(input_dict[k])
        values = torch.stack(values, dim=0)
        dist.all_reduce(values)  # expect: RC104
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
    criterion = SetCriterion(3)
    loader = torch.utils.data.DataLoader(list(range(8)), batch_size=2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_one_epoch(model, criterion, loader, optimizer)
