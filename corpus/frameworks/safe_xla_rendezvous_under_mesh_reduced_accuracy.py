"""The look-alike of rc101_xla_rendezvous_under_per_core_validation_accuracy.py: the cores'
correct and total counts are summed with `xm.mesh_reduce` before the comparison, so every core
compares the same accuracy and reaches the rendezvous together.
"""
import torch
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
from torch.utils.data import DataLoader, DistributedSampler


def validate(model, loader, device):
    model.eval()
    correct, total = 0, 0
    with torch.no_grad():
        for images, labels in pl.ParallelLoader(loader, [device]).per_device_loader(device):
            correct += (model(images).argmax(dim=1) == labels).sum().item()
            total += labels.numel()
    correct, total = xm.mesh_reduce("valid_counts", (correct, total), lambda parts: tuple(map(sum, zip(*parts))))
    return correct / max(total, 1)


def build_loaders(train_set, valid_set):
    world, ordinal = xm.xrt_world_size(), xm.get_ordinal()
    train_sampler = DistributedSampler(train_set, num_replicas=world, rank=ordinal, shuffle=True)
    valid_sampler = DistributedSampler(valid_set, num_replicas=world, rank=ordinal, shuffle=False)
    train_loader = DataLoader(train_set, batch_size=32, sampler=train_sampler, drop_last=True)
    valid_loader = DataLoader(valid_set, batch_size=32, sampler=valid_sampler)
    return train_loader, valid_loader


def train(model, train_set, valid_set, optimizer, epochs):
    device = xm.xla_device()
    train_loader, valid_loader = build_loaders(train_set, valid_set)
    best = 0.0
    for epoch in range(epochs):
        model.train()
        for images, labels in pl.MpDeviceLoader(train_loader, device):
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(images), labels).backward()
            xm.optimizer_step(optimizer)
        acc = validate(model, valid_loader, device)
        if acc > best:
            best = acc
            xm.save(model.state_dict(), "best.pt")
            xm.rendezvous("best_saved")
