"""Safe twin of bfn_validate_without_ema_through_prepared_model: as in bayesian-flow-networks#6
(the fix the maintainer acknowledged), `validate` evaluates `accelerator.unwrap_model(model)` when
there is no EMA copy, so the main-process-only validation runs the plain module and issues no
collective of the DDP wrapper.

Thread: https://github.com/nnaisense/bayesian-flow-networks/pull/6
"""
import copy
import math
import random
from collections import defaultdict
from typing import Optional

import numpy as np
import torch
from accelerate import Accelerator
from omegaconf import OmegaConf
from torch import nn, optim

from utils_train import make_bfn, make_config, make_dataloaders


def seed_everything(seed: int) -> None:
    seed += torch.distributed.get_rank() if torch.distributed.is_initialized() else 0
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def ddict():
    """Infinite default dict standing in for a neptune run on non-main processes."""
    return defaultdict(ddict)


def log(key_handler, value, step, cond=True):
    if not isinstance(key_handler, defaultdict) and cond and math.isfinite(value):
        key_handler.log(value, step=step)


def make_infinite(dataloader):
    while True:
        for data in dataloader:
            yield data


@torch.no_grad()
def update_ema(ema_model: Optional[nn.Module], model: nn.Module, ema_decay: float) -> None:
    if ema_model is not None and ema_decay > 0:
        for ema_param, model_param in zip(ema_model.parameters(), model.parameters()):
            ema_param.sub_((1 - ema_decay) * (ema_param - model_param))


def setup(cfg):
    dataloaders = make_dataloaders(cfg)
    model = make_bfn(cfg.model)
    optimizer = optim.AdamW(params=model.net.parameters(), **cfg.optimizer)
    return model, dataloaders, optimizer


@torch.no_grad()
def validate(cfg, model, ema_model, val_dataloader, step, run, accelerator) -> float:
    """Mean loss of the EMA weights (or of the live weights without EMA) on the validation set."""
    dtype = {"no": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[accelerator.mixed_precision]
    model_to_eval = ema_model if ema_model is not None else accelerator.unwrap_model(model)
    model_to_eval.eval()
    max_steps = cfg.max_val_batches if cfg.max_val_batches > 0 else len(val_dataloader)
    loss, count = 0.0, 0
    for _ in range(cfg.val_repeats):
        for idx, eval_batch in enumerate(val_dataloader):
            enabled = dtype in (torch.float16, torch.bfloat16)
            with torch.inference_mode(), torch.autocast("cuda", dtype=dtype, enabled=enabled):
                loss += model_to_eval(eval_batch.to(accelerator.device)).item()
                count += 1
            if (idx + 1) >= max_steps:
                break
    loss /= count
    log(run["metrics"]["val"]["loss"], loss, step)
    model.train()
    return loss


def train(cfg, accelerator: Accelerator, model, ema_model, dataloaders: dict, optimizer, run):
    is_main = accelerator.is_main_process
    best_val_loss = math.inf
    train_iter = make_infinite(dataloaders["train"])
    model.train()
    for step in range(cfg.start_step, cfg.n_training_steps + 1):
        step_loss = 0.0
        for _ in range(cfg.accumulate):
            with accelerator.accumulate(model):
                train_batch = next(train_iter)
                loss = model(train_batch)
                accelerator.backward(loss)
                if accelerator.sync_gradients and cfg.grad_clip_norm > 0:
                    accelerator.clip_grad_norm_(model.parameters(), cfg.grad_clip_norm)
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
            step_loss += loss.item()

        update_ema(ema_model, model, cfg.ema_decay)
        log(run["metrics"]["train"]["loss"], step_loss / cfg.accumulate, step, is_main and step % cfg.log_interval == 0)

        if is_main and (step % cfg.val_interval == 0) and "val" in dataloaders:
            val_loss = validate(
                cfg, model, ema_model, dataloaders["val"], step, run, accelerator
            )
            best_val_loss = min(val_loss, best_val_loss)


def main(cfg):
    acc = Accelerator(gradient_accumulation_steps=cfg.training.accumulate)
    seed_everything(cfg.training.seed)
    with acc.main_process_first():
        model, dataloaders, optimizer = setup(cfg)
    # EMA on the main process only; switched off entirely when ema_decay <= 0
    ema = copy.deepcopy(model) if acc.is_main_process and cfg.training.ema_decay > 0 else None
    model, optimizer, dataloaders["train"] = acc.prepare(model, optimizer, dataloaders["train"])
    if ema is not None:
        ema.to(acc.device)
    run = ddict()
    train(cfg.training, acc, model, ema, dataloaders, optimizer, run)


if __name__ == "__main__":
    cfg_file = OmegaConf.from_cli()["config_file"]
    main(make_config(cfg_file))
