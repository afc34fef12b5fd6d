"""Safe twin of particleflow_rank0_validation_barriers_through_ddp/mlpf/pyg/training.py, with
the fix of the PR: both barriers are outside the rank-0 block, so every rank reaches them, and the
rank-0-only validation forward goes through `model.module(event)` (the bare module, no DDP
collectives) instead of the DistributedDataParallel wrapper.

Thread: https://github.com/jpata/particleflow/pull/233
"""
import json
import time

import numpy as np
import torch
import torch.distributed as dist
import tqdm
from torch.nn import functional as F
from torch.utils.tensorboard import SummaryWriter

from .logger import _logger

np.seterr(divide="ignore", invalid="ignore")


@torch.no_grad()
def validation_run(rank, world_size, model, train_loader, valid_loader, tensorboard_writer=None):
    with torch.no_grad():
        optimizer = None
        ret = train(rank, world_size, model, train_loader, valid_loader, optimizer, tensorboard_writer)
    return ret


def train(rank, world_size, model, train_loader, valid_loader, optimizer, tensorboard_writer=None):
    """One epoch of training, or of validation when optimizer is None."""
    is_train = optimizer is not None
    loader = train_loader if is_train else valid_loader
    model.train() if is_train else model.eval()
    _logger.info(f"Initiating a {'training' if is_train else 'validation'} run on device {rank}")

    losses = {"Total": 0.0, "Classification": 0.0, "Regression": 0.0, "Charge": 0.0}
    num_iterations = 0
    for i, batch in tqdm.tqdm(enumerate(loader), total=len(loader)):
        num_iterations += 1
        event = batch.to(rank)
        target_ids = event.ygen[:, 0].long()
        target_charge = torch.clamp((event.ygen[:, 1] + 1).to(dtype=torch.float32), 0, 2)
        target_momentum = event.ygen[:, 2:-1].to(dtype=torch.float32)

        # make mlpf forward pass
        if is_train:
            pred_ids_one_hot, pred_momentum, pred_charge = model(event)
        else:
            if world_size > 1:  # validation run is only run on a single machine
                pred_ids_one_hot, pred_momentum, pred_charge = model.module(event)
            else:
                pred_ids_one_hot, pred_momentum, pred_charge = model(event)

        msk_true_particle = torch.unsqueeze((target_ids != 0).to(dtype=torch.float32), axis=-1)
        loss_ = {
            "Classification": 100 * F.cross_entropy(pred_ids_one_hot, target_ids),
            "Regression": 10 * F.huber_loss(pred_momentum * msk_true_particle, target_momentum * msk_true_particle),
            "Charge": F.cross_entropy(pred_charge * msk_true_particle,
                                      (target_charge * msk_true_particle[:, 0]).to(dtype=torch.int64)),
        }
        loss_["Total"] = loss_["Classification"] + loss_["Regression"] + loss_["Charge"]
        if is_train:
            for param in model.parameters():
                param.grad = None
            loss_["Total"].backward()
            optimizer.step()
        for loss in losses:
            losses[loss] += loss_[loss].detach().cpu().item()

    for loss in losses:
        losses[loss] = losses[loss] / num_iterations
    return losses


def train_mlpf(rank, world_size, model, train_loader, valid_loader, n_epochs, lr, outpath):
    """Full training: train() then validation_run() every epoch."""
    tensorboard_writer = SummaryWriter(outpath)
    t0_initial = time.time()
    best_val_loss = 99999.9
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)

    for epoch in range(n_epochs):
        t0 = time.time()
        losses_t = train(rank, world_size, model, train_loader, valid_loader, optimizer, tensorboard_writer)
        for k, v in losses_t.items():
            tensorboard_writer.add_scalar(f"epoch/train_loss_rank_{rank}_" + k, v, epoch)

        # validation step on a single machine
        if world_size > 1:
            dist.barrier()
        if (rank == 0) or (rank == "cpu"):
            losses_v = validation_run(rank, world_size, model, train_loader, valid_loader, tensorboard_writer)
        if world_size > 1:
            dist.barrier()

        if (rank == 0) or (rank == "cpu"):
            for k, v in losses_v.items():
                tensorboard_writer.add_scalar("epoch/valid_loss_" + k, v, epoch)
            tensorboard_writer.flush()

            if losses_v["Total"] < best_val_loss:
                best_val_loss = losses_v["Total"]
                if isinstance(model, torch.nn.parallel.DistributedDataParallel):
                    state_dict = model.module.state_dict()
                else:
                    state_dict = model.state_dict()
                torch.save(state_dict, f"{outpath}/best_epoch_weights.pth")
                with open(f"{outpath}/best_epoch.json", "w") as fp:
                    json.dump({"best_epoch": epoch}, fp)

            eta = (n_epochs - (epoch + 1)) * (time.time() - t0_initial) / (epoch + 1) / 60
            _logger.info(
                f"Rank {rank}: epoch={epoch + 1} / {n_epochs} train_loss={round(losses_t['Total'], 4)} "
                f"valid_loss={round(losses_v['Total'], 4)} time={round((time.time() - t0) / 60, 2)}m eta={round(eta, 1)}m"
            )

    _logger.info(f"Done with training. Total training time on rank {rank} is {round((time.time() - t0_initial) / 60, 3)}min")
