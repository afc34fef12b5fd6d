"""Launcher: one process per GPU via mp.spawn, SyncBatchNorm conversion, base-step training."""
import argparse
import json
import logging
import random

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.utils.data.distributed import DistributedSampler

from data_loader import VOCIncremental
from models import DeepLabV3
from trainer import Trainer_base


def get_logger(rank):
    logger = logging.getLogger(f"train(rank{rank})")
    logger.setLevel(logging.INFO if rank == 0 else logging.WARNING)
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s"))
    logger.addHandler(handler)
    return logger


def main_worker(gpu, ngpus_per_node, config):
    rank = config["rank"] * ngpus_per_node + gpu
    dist.init_process_group(backend="nccl", init_method=config["dist_url"], world_size=config["world_size"], rank=rank)
    logger = get_logger(rank)

    torch.manual_seed(config["seed"])
    np.random.seed(config["seed"])
    random.seed(config["seed"])

    task = config["task"]
    dataset = VOCIncremental(config["data_root"], task_name=task["name"], step=task["step"],
                             crop=config["crop_size"], batch_size=config["batch_size"])
    train_loader = dataset.get_train_loader(DistributedSampler(dataset.train_set))
    val_loader = dataset.get_val_loader(DistributedSampler(dataset.val_set, shuffle=False))

    model = DeepLabV3(classes=dataset.get_per_task_classes())
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)

    lr = config["optimizer"]["lr"]
    optimizer = torch.optim.SGD(
        [
            {"params": model.get_backbone_params()},
            {"params": model.get_aspp_params(), "lr": lr * 10},
            {"params": model.get_classifer_params(), "lr": lr * 10},
        ],
        lr=lr, momentum=0.9, weight_decay=config["optimizer"]["weight_decay"],
    )
    max_iters = config["trainer"]["epochs"] * len(train_loader)
    lr_scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda it: (1 - it / max_iters) ** 0.9)

    trainer = Trainer_base(
        model=model, optimizer=optimizer, config=config, task_info=dataset.task_info(),
        data_loader=(train_loader, val_loader), lr_scheduler=lr_scheduler, logger=logger, gpu=gpu,
    )
    torch.distributed.barrier()
    trainer.train()
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description="Class incremental semantic segmentation")
    parser.add_argument("-c", "--config", required=True, help="JSON config file")
    args = parser.parse_args()
    with open(args.config, "r") as f:
        config = json.load(f)
    ngpus_per_node = torch.cuda.device_count()
    config["world_size"] = ngpus_per_node * config.get("world_size", 1)
    config.setdefault("rank", 0)
    mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, config))


if __name__ == "__main__":
    main()
