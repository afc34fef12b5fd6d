"""Reconstruction of https://github.com/allenai/molmo/pull/33

Project: allenai/molmo (OLMo-style FSDP trainer, scripts/train.py).
What hung: resuming a multi-GPU run with `allow_resume`. The block that looks
for `<save_folder>/latest` and sets `cfg.load_path` was indented inside
`if get_global_rank() == 0:` (the block that logs and saves the config). Only
rank 0 therefore set cfg.load_path, and later only rank 0 entered
`if cfg.load_path is not None: trainer.restore_checkpoint(...)`, a collective
sharded FSDP load that ends in a barrier (see olmo/train.py). The other ranks
skipped it and went on to trainer.fit(); the PR author: "only GPU rank 0 ever
attempted to load the model state. All other ranks idled at the barrier and
eventually timed out."
Fix (the PR): dedent `if cfg.allow_resume:` out of the rank-0 block so every
rank resolves the same load_path and every rank calls the loader.
Trimmed: the pre-train checkpoint save/verify block, evaluators, and wandb are
left out; the model/optimizer builders are stand-ins.
expected: RC101 at scripts/train.py line 92
"""
import logging
import sys
from pathlib import Path

import torch
from omegaconf import OmegaConf
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import ShardingStrategy
from transformers import AutoModelForCausalLM

from olmo.torch_util import barrier, get_global_rank, get_local_rank, get_world_size, seed_all
from olmo.train import Trainer

log = logging.getLogger("train")


def build_train_dataloader(cfg, device):
    from torch.utils.data import DataLoader, DistributedSampler
    from datasets import load_from_disk

    dataset = load_from_disk(cfg.data.path).with_format("torch")
    sampler = DistributedSampler(dataset, shuffle=True, seed=cfg.seed, drop_last=True)
    return DataLoader(dataset, batch_size=cfg.device_train_batch_size, sampler=sampler, num_workers=4)


def main(cfg) -> None:
    torch.cuda.set_device(f"cuda:{get_local_rank()}")
    device = torch.device("cuda")
    barrier()

    cfg.device_train_batch_size = cfg.global_train_batch_size // get_world_size()

    if get_global_rank() == 0:
        log.info("Configuration:")
        log.info(OmegaConf.to_yaml(cfg))

        if cfg.allow_resume:
            config_path = Path(cfg.save_folder) / "config.yaml"
            if config_path.exists():
                latest_checkpoint = Path(cfg.save_folder) / "latest"
                if latest_checkpoint.exists():
                    log.info(f"Resuming from {latest_checkpoint}")
                    saved_config = OmegaConf.load(config_path)
                    if saved_config.model != cfg.model:
                        log.warning("Model config does not match the one resuming from")
                    cfg.load_path = str(latest_checkpoint)
                else:
                    log.info("Not resuming since no latest checkpoint found")

        if cfg.load_path is None or Path(cfg.load_path).parent != Path(cfg.save_folder):
            save_path = Path(cfg.save_folder) / "config.yaml"
            save_path.parent.mkdir(exist_ok=True, parents=True)
            OmegaConf.save(cfg, save_path)

    barrier()
    seed_all(cfg.seed)
    train_loader = build_train_dataloader(cfg, device)

    model = AutoModelForCausalLM.from_pretrained(cfg.model.name_or_path, torch_dtype=torch.bfloat16)
    fsdp_model = FSDP(
        model,
        sharding_strategy=ShardingStrategy.FULL_SHARD,
        device_id=get_local_rank(),
        sync_module_states=True,
        use_orig_params=True,
    )
    optim = torch.optim.AdamW(fsdp_model.parameters(), lr=cfg.optimizer.learning_rate)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optim, lambda step: min(1.0, (step + 1) / cfg.t_warmup))

    with Trainer(cfg=cfg, fsdp_model=fsdp_model, optim=optim, scheduler=scheduler,
                 train_loader=train_loader, device=device) as trainer:
        if cfg.load_path is not None:
            log.info(f"Loading checkpoint from {cfg.load_path}...")
            trainer.restore_checkpoint(  # expect: RC101
                cfg.load_path,
                load_optimizer_state=not cfg.reset_optimizer_state,
                load_trainer_state=not cfg.reset_trainer_state,
            )
            log.info("Checkpoint successfully loaded")

        log.info("Starting training...")
        trainer.fit()
        log.info("Training complete")


if __name__ == "__main__":
    torch.distributed.init_process_group(backend="nccl")
    logging.basicConfig(level=logging.INFO)
    yaml_path, args_list = sys.argv[1], sys.argv[2:]
    cfg = OmegaConf.merge(OmegaConf.load(yaml_path), OmegaConf.from_cli(args_list))
    main(cfg)
