"""Training loop (D-FINE src/solver/det_engine.py, trimmed)."""

import math
import sys

import torch

from dfine_lite import dist_utils


def train_one_epoch(model, criterion, data_loader, optimizer, device, epoch, max_norm=0.1, print_freq=100,
                    scaler=None):
    model.train()
    criterion.train()
    losses = []
    for i, (samples, targets) in enumerate(data_loader):
        global_step = epoch * len(data_loader) + i
        samples = samples.to(device)
        targets = [{k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in t.items()} for t in targets]

        with torch.autocast(device_type="cuda", enabled=scaler is not None):
            outputs = model(samples, targets=targets)
        with torch.autocast(device_type="cuda", enabled=False):
            loss_dict = criterion(outputs, targets, epoch=epoch, step=i, global_step=global_step)

        loss = sum(loss_dict.values())
        optimizer.zero_grad()
        if scaler is not None:
            scaler.scale(loss).backward()
            if max_norm > 0:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            if max_norm > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            optimizer.step()

        loss_dict_reduced = dist_utils.reduce_dict(loss_dict)
        loss_value = sum(loss_dict_reduced.values())
        losses.append(loss_value.detach().cpu().numpy())

        if not math.isfinite(loss_value):
            print("Loss is {}, stopping training".format(loss_value))
            print(loss_dict_reduced)
            sys.exit(1)

        if i % print_freq == 0 and dist_utils.is_main_process():
            items = "  ".join(f"{k}: {v.item():.4f}" for k, v in loss_dict_reduced.items())
            print(f"Epoch: [{epoch}] [{i}/{len(data_loader)}]  loss: {loss_value.item():.4f}  {items}")
    return {"loss": float(sum(losses) / max(len(losses), 1))}
