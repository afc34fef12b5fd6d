"""Fixed twin of fsdp_t5_save_on_best_loss_after_dist_reduce: the validation loss is all-reduced, so
every rank takes the same save decision.
"""
import argparse
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullStateDictConfig, FullyShardedDataParallel as FSDP, StateDictType
from transformers import T5ForConditionalGeneration


def validation(model, rank, world_size, val_loader):
    model.eval()
    fsdp_loss = torch.zeros(2).to(rank)
    with torch.no_grad():
        for batch in val_loader:
            for key in batch:
                batch[key] = batch[key].to(rank)
            output = model(input_ids=batch["source_ids"], attention_mask=batch["source_mask"], labels=batch["target_ids"])
            fsdp_loss[0] += output["loss"].item()
            fsdp_loss[1] += len(batch)
    dist.all_reduce(fsdp_loss, op=dist.ReduceOp.SUM)
    val_loss = fsdp_loss[0] / fsdp_loss[1]
    if rank == 0:
        print(f"Validation Loss: {val_loss:.4f}")
    return val_loss


def train(model, rank, train_loader, optimizer, epoch):
    model.train()
    ddp_loss = torch.zeros(2).to(rank)
    for batch in train_loader:
        for key in batch:
            batch[key] = batch[key].to(rank)
        optimizer.zero_grad()
        output = model(input_ids=batch["source_ids"], attention_mask=batch["source_mask"], labels=batch["target_ids"])
        output["loss"].backward()
        optimizer.step()
        ddp_loss[0] += output["loss"].item()
        ddp_loss[1] += len(batch)
    dist.all_reduce(ddp_loss, op=dist.ReduceOp.SUM)
    return ddp_loss[0] / ddp_loss[1]


def save_model_checkpoint(model, rank, cfg, epoch):
    policy = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, policy):
        cpu_state = model.state_dict()
    if rank == 0:
        torch.save(cpu_state, os.path.join(cfg.save_dir, f"{cfg.model_name}-{epoch}.pt"))


def fsdp_main(cfg):
    dist.init_process_group("nccl", timeout=timedelta(minutes=30))
    rank, local_rank = dist.get_rank(), int(os.environ["LOCAL_RANK"])
    world_size = dist.get_world_size()
    torch.cuda.set_device(local_rank)
    from t5_data import build_loaders, t5_auto_wrap_policy  # project-local modules

    train_loader, val_loader = build_loaders(cfg, rank, world_size)
    model = T5ForConditionalGeneration.from_pretrained(cfg.model_name)
    model = FSDP(model, auto_wrap_policy=t5_auto_wrap_policy, device_id=torch.cuda.current_device())
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=cfg.gamma)
    best_val_loss = float("inf")
    for epoch in range(1, cfg.epochs + 1):
        train(model, local_rank, train_loader, optimizer, epoch)
        curr_val_loss = validation(model, local_rank, world_size, val_loader)
        scheduler.step()
        if cfg.save_model and curr_val_loss < best_val_loss:
            save_model_checkpoint(model, rank, cfg, epoch)
            best_val_loss = curr_val_loss
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--model_name", default="t5-large")
    p.add_argument("--save_dir", default="checkpoints")
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--gamma", type=float, default=0.85)
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--save_model", action="store_true")
    fsdp_main(p.parse_args())
