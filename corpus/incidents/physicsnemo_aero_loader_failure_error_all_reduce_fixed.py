"""Safe twin of physicsnemo_aero_loader_failure_error_all_reduce.py: failures are coordinated
in phases. Every rank reaches a status all-reduce right after loading and moving the batch
(before the DDP forward), and another after forward/loss (before backward); if any rank failed,
all ranks raise together, so no rank sits in the status all-reduce while another is inside a DDP
collective.

Thread: https://github.com/NVIDIA/physicsnemo/pull/1972
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


def raise_if_any_rank_failed(local_error, phase, device):
    """Collective: every rank calls it at the same point of the step."""
    flag = torch.tensor([0.0 if local_error is None else 1.0], device=device)
    dist.all_reduce(flag, op=dist.ReduceOp.MAX)
    if flag.item() > 0:
        if local_error is not None:
            raise RuntimeError(f"{phase} failed on rank {dist.get_rank()}") from local_error
        raise RuntimeError(f"{phase} failed on another rank; see its log")


def train_epoch(model, loader, optimizer, scaler, device, epoch, cfg):
    model.train()
    total, n = 0.0, 0
    it = iter(loader)
    for step in range(len(loader)):
        error, batch = None, None
        try:
            batch = to_device(next(it), device)
        except Exception as exc:
            log.exception("rank %d: loading step %d of epoch %d failed", dist.get_rank(), step, epoch)
            error = exc
        raise_if_any_rank_failed(error, "data loading", device)

        error, loss = None, None
        try:
            with torch.autocast("cuda", dtype=torch.float16, enabled=cfg.training.amp):
                pred = model(batch["surface_coords"], batch["geometry"])
                loss = relative_l2_loss(pred, batch["surface_fields"])
        except Exception as exc:
            log.exception("rank %d: forward of step %d failed", dist.get_rank(), step)
            error = exc
        raise_if_any_rank_failed(error, "forward/loss", device)

        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
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
