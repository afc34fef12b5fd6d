"""Training loop of a PhysicsNeMo-style unified external-aerodynamics recipe (DDP, torchrun, one
process per GPU, fp16 GradScaler). A step's failure on one rank (a corrupt or unreadable sample,
a host-to-device copy error) is caught so that the ranks can agree to stop together: the step
records the failure in a flag, and the flag is all-reduced after the step.

Thread: https://github.com/NVIDIA/physicsnemo/pull/1972 ("Unified aero recipe: coordinate step failures and restore scheduler/scaler state")
Project: NVIDIA/physicsnemo
What hung: a rank whose data loading failed went straight from the handler to "the error
all-reduce while a healthy rank is inside DDP buffer synchronization or bucket rebuilding": the
healthy ranks were in the collectives of the DDP forward/backward of the same step, the failing
rank in the flag all-reduce, so the sequences did not match.
Fix (the PR, by a maintainer; open at the time of writing): "Coordinate rank-local data-loading
and device-transfer failures before DDP forward, then forward/loss failures before backward" --
every rank reaches a status all-reduce right after loading and another before backward, and all
ranks raise together, keeping the failing rank's original exception.
Inferred: the shape of the pre-fix step (one try around load, forward and backward, the flag
all-reduced after it), from the PR description.
Expected rankcheck finding: RC105 on the `except` that swallows the rank-local failure before
the flag all-reduce.
"""
import logging

import hydra
import torch
import torch.distributed as dist
from omegaconf import DictConfig
from torch.nn.parallel import DistributedDataParallel

from recipe import build_datapipes, build_model, relative_l2_loss

log = logging.getLogger("aero")


def to_device(batch, device):
    return {k: v.to(device, non_blocking=True) if torch.is_tensor(v) else v for k, v in batch.items()}


def train_epoch(model, loader, optimizer, scaler, device, epoch, cfg):
    model.train()
    total, n = 0.0, 0
    it = iter(loader)
    for step in range(len(loader)):
        failed = torch.zeros(1, device=device)
        error = None
        try:
            batch = to_device(next(it), device)
            with torch.autocast("cuda", dtype=torch.float16, enabled=cfg.training.amp):
                pred = model(batch["surface_coords"], batch["geometry"])
                loss = relative_l2_loss(pred, batch["surface_fields"])
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        except Exception as exc:  # expect: RC105
            log.exception("rank %d: step %d of epoch %d failed", dist.get_rank(), step, epoch)
            failed.fill_(1.0)
            error = exc
        dist.all_reduce(failed, op=dist.ReduceOp.MAX)
        if failed.item() > 0:
            raise RuntimeError(f"training step {step} failed on at least one rank") from error
        total += loss.detach().item()
        n += 1
    return total / max(n, 1)


@hydra.main(version_base=None, config_path="conf", config_name="train")
def main(cfg: DictConfig):
    dist.init_process_group("nccl")
    local_rank = dist.get_rank() % torch.cuda.device_count()
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)

    train_loader, _ = build_datapipes(cfg, rank=dist.get_rank(), world_size=dist.get_world_size())
    model = DistributedDataParallel(build_model(cfg).to(device), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.training.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=cfg.training.epochs)
    scaler = torch.cuda.amp.GradScaler(enabled=cfg.training.amp)

    for epoch in range(cfg.training.epochs):
        loss = train_epoch(model, train_loader, optimizer, scaler, device, epoch, cfg)
        scheduler.step()
        if dist.get_rank() == 0:
            log.info("epoch %d train loss %.5f", epoch, loss)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
