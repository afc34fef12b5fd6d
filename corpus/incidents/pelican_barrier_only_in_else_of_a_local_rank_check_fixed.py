"""PELICAN jet-tagging classifier trained under torchrun, after the fix of PELICAN#15: the process
with local rank 0 saves the checkpoint and logs the metrics, and then every process meets in the
same barrier (`synchronize()`), whichever arm of the `device_id <= 0` test it took.

Thread: https://github.com/abogatskiy/PELICAN/pull/15 ("Hotfix"; the commit "hotfix for hanging on
barrier during DDP training")
Project: abogatskiy/PELICAN
Fix (the PR, merged; the helper from the follow-up commit 68e4ad5): the barriers leave the `else`
arms and are issued by every process after the rank-0 work, through `synchronize()`, which returns
early when there is no process group; the barrier at the top of `train_epoch` is removed.
Expected rankcheck finding: none (safe twin).
"""
import argparse
import logging
import os
import random
from datetime import datetime, timedelta
from math import inf

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from src.dataloaders import collate_fn, initialize_datasets
from src.models import PELICANClassifier
from src.models.metrics_classifier import metrics

logger = logging.getLogger(__name__)


def get_world_size():
    if not dist.is_available():
        return 1
    if not dist.is_initialized():
        return 1
    return dist.get_world_size()


def all_gather(tensor):
    """All-gathers the tensor from every process and concatenates along dim 0."""
    world_size = get_world_size()
    if world_size <= 1:
        return tensor
    tensor_placeholder = [torch.zeros_like(tensor) for _ in range(world_size)]
    dist.all_gather(tensor_placeholder, tensor, async_op=False)
    return torch.cat(tensor_placeholder, dim=0)


def synchronize():
    """Barrier among all processes when training is distributed; a no-op otherwise."""
    if not dist.is_available():
        return
    if not dist.is_initialized():
        return
    if dist.get_world_size() == 1:
        return
    dist.barrier()


def init_cuda(args, device_id=-1):
    if args.device in ["gpu", "cuda"]:
        assert torch.cuda.is_available(), "No CUDA device available!"
        if device_id < 0:
            device = torch.device("cuda")
        else:
            torch.cuda.set_device(device_id)
            dist.init_process_group(backend="nccl", timeout=timedelta(hours=12))
            logger.info(f"Setting cuda device = {device_id}")
            device = torch.device(device_id)
    else:
        device = torch.device("cpu")
    dtype = torch.double if args.dtype == "double" else torch.float
    return device, dtype


def set_seed(args):
    if args.seed < 0:
        seed = int(datetime.now().timestamp() * 100000)
        if get_world_size() > 1:
            # make sure all GPUs get the same random seed
            seed_list = [seed]
            dist.broadcast_object_list(seed_list, 0)
            seed = seed_list[0]
        args.seed = seed
    torch.manual_seed(args.seed)
    torch.cuda.manual_seed_all(args.seed)
    np.random.seed(args.seed % 2**32)
    random.seed(args.seed)
    return args


class Trainer:
    """Trains the network, checkpoints it and logs the predictions of each split."""

    def __init__(self, args, dataloaders, model, loss_fn, metrics_fn, optimizer, scheduler, device_id, device, dtype):
        self.args = args
        self.dataloaders = dataloaders
        self.model = model
        self.loss_fn = loss_fn
        self.metrics_fn = metrics_fn
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.epoch = 1
        self.minibatch = 0
        self.best_epoch = 0
        self.best_metrics = {"loss": inf}
        self.device_id = device_id
        self.device = device
        self.dtype = dtype

    def _save_checkpoint(self, valid_metrics=None):
        if not self.args.save:
            return
        save_dict = {
            "args": self.args,
            "model_state": self.model.state_dict(),
            "optimizer_state": self.optimizer.state_dict(),
            "scheduler_state": self.scheduler.state_dict(),
            "epoch": self.epoch,
            "minibatch": self.minibatch,
            "best_epoch": self.best_epoch,
            "best_metrics": self.best_metrics,
        }
        if valid_metrics is None:
            logger.info(f"Saving model to checkpoint file: {self.args.checkfile}")
            torch.save(save_dict, self.args.checkfile)
        elif valid_metrics["loss"] < self.best_metrics["loss"]:
            self.best_epoch = self.epoch
            self.best_metrics = save_dict["best_metrics"] = valid_metrics
            logger.info(f"Lowest loss achieved! Saving best model to file: {self.args.bestfile}")
            torch.save(save_dict, self.args.bestfile)

    def _get_target(self, data):
        target_type = torch.long if self.args.target == "is_signal" else self.dtype
        return data[self.args.target].to(self.device, target_type)

    def evaluate(self, splits=("test",), distributed=False, best=True, final=True):
        if not self.args.save:
            logger.info("No model saved! Cannot give final status.")
            return
        # make sure main process has finished writing to disk before proceeding
        synchronize()
        if final:
            checkpoint = torch.load(self.args.checkfile, map_location=self.device)
            final_epoch = checkpoint["epoch"]
            self.model.load_state_dict(checkpoint["model_state"])
            logger.info(f"Getting predictions for final model {self.args.checkfile} (epoch {final_epoch}).")
            for split in splits:
                predict, targets = self.predict(set=split, distributed=distributed)
                if self.device_id <= 0:
                    best_metrics, logstring = self.log_predict(predict, targets, split, description="Final")
                synchronize()
        if best:
            checkpoint = torch.load(self.args.bestfile, map_location=self.device)
            best_epoch = checkpoint["epoch"]
            self.model.load_state_dict(checkpoint["model_state"])
            if (not final) or (final and not best_epoch == final_epoch):
                logger.info(f"Getting predictions for best model {self.args.bestfile} (epoch {best_epoch}).")
                for split in splits:
                    predict, targets = self.predict(split, distributed=distributed)
                    if self.device_id <= 0:
                        best_metrics, logstring = self.log_predict(predict, targets, split, description="Best")
                    synchronize()
            elif best_epoch == final_epoch:
                logger.info("BEST MODEL IS SAME AS FINAL")
                if self.device_id <= 0:
                    self.log_predict(predict, targets, split, description="Best", repeat=[best_metrics, logstring])
        logger.info("Inference phase complete!\n")

    def train(self):
        start_epoch = self.epoch
        for epoch in range(start_epoch, self.args.num_epoch + 1):
            self.epoch = epoch
            if get_world_size() > 1:
                self.dataloaders["train"].sampler.set_epoch(epoch)
            logger.info(f"STARTING Epoch {epoch}")

            train_predict, train_targets, epoch_t = self.train_epoch()
            if self.device_id <= 0:
                self._save_checkpoint()
                self.log_predict(train_predict, train_targets, "train", epoch=epoch, epoch_t=epoch_t)

            valid_predict, valid_targets = self.predict(set="valid", distributed=True)

            if self.device_id <= 0:
                self._save_checkpoint()
                valid_metrics, _ = self.log_predict(valid_predict, valid_targets, "valid", epoch=epoch)
                self._save_checkpoint(valid_metrics)
            synchronize()

            if not self.args.lr_minibatch:
                self.scheduler.step()
            logger.info(f"FINISHED Epoch {epoch}\n_________________________\n")
        return self.best_epoch, self.best_metrics

    def train_epoch(self):
        dataloader = self.dataloaders["train"]
        all_predict, all_targets = {}, []
        self.model.train()
        epoch_t = datetime.now()
        for batch_idx, data in enumerate(dataloader):
            self.minibatch = batch_idx
            targets = self._get_target(data)
            predict = self.model(data)
            loss = self.loss_fn(predict["predict"], targets)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            if self.args.lr_minibatch:
                self.scheduler.step()

            targets = all_gather(targets).detach().cpu()
            predict = {key: all_gather(val).detach().cpu() for key, val in predict.items()}
            if self.device_id <= 0:
                all_targets.append(targets)
                for key, val in predict.items():
                    all_predict.setdefault(key, []).append(val)
                if self.args.save_every > 0 and (batch_idx + 1) % self.args.save_every == 0:
                    self._save_checkpoint()

        if self.device_id > 0:
            return None, None, epoch_t
        all_predict = {key: torch.cat(val) for key, val in all_predict.items()}
        return all_predict, torch.cat(all_targets), epoch_t

    def predict(self, set="valid", distributed=True):
        dataloader = self.dataloaders[set]
        self.model.eval()
        all_predict, all_targets = {}, []
        start_time = datetime.now()
        logger.info(f"Starting testing on {set} set: ")
        if not distributed:
            if self.device_id > 0:
                return None, None
            gather = lambda x: x  # noqa: E731
        else:
            gather = all_gather

        with torch.no_grad():
            for batch_idx, data in enumerate(dataloader):
                targets = gather(self._get_target(data)).detach().cpu()
                predict = self.model(data)
                predict = {key: gather(val).detach().cpu() for key, val in predict.items()}
                if self.device_id <= 0:
                    all_targets.append(targets)
                    for key, val in predict.items():
                        all_predict.setdefault(key, []).append(val)

        if self.device_id > 0:
            return None, None
        all_targets = torch.cat(all_targets)
        all_predict = {key: torch.cat(val) for key, val in all_predict.items()}
        logger.info(f"Total evaluation time: {(datetime.now() - start_time).total_seconds()}s")
        return all_predict, all_targets

    def log_predict(self, predict, targets, dataset, epoch=-1, epoch_t=None, description="", repeat=None):
        suffix = "final" if epoch >= 0 else "best"
        prefix = f"{self.args.predictfile}.{suffix}.{dataset}"
        predict = {key: val.cpu().double() for key, val in predict.items()}
        targets = targets.cpu().double()
        if repeat is None:
            metrics, logstring = self.metrics_fn(predict["predict"], targets, self.loss_fn, prefix, logger)
        else:
            metrics, logstring = repeat
        if epoch >= 0:
            logger.info(f"Epoch {epoch} {description} {dataset}" + logstring)
        else:
            logger.info(f"{description:<5} {dataset:<10}" + logstring)
        if epoch_t:
            logger.info(f"Total epoch time:      {(datetime.now() - epoch_t).total_seconds()}s")
        torch.save(predict, prefix + ".pt")
        return metrics, logstring


def parse_args():
    parser = argparse.ArgumentParser(description="PELICAN classifier training")
    parser.add_argument("--datadir", type=str, default="./data/sample_data")
    parser.add_argument("--prefix", type=str, default="nosave")
    parser.add_argument("--workdir", type=str, default="./")
    parser.add_argument("--num-epoch", type=int, default=35)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lr-init", type=float, default=0.0025)
    parser.add_argument("--lr-final", type=float, default=1e-6)
    parser.add_argument("--lr-minibatch", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--weight-decay", type=float, default=0.005)
    parser.add_argument("--num-workers", type=int, default=0)
    parser.add_argument("--seed", type=int, default=-1)
    parser.add_argument("--save", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--save-every", type=int, default=0)
    parser.add_argument("--target", type=str, default="is_signal")
    parser.add_argument("--num-classes", type=int, default=2)
    parser.add_argument("--num-channels-scalar", type=int, default=10)
    parser.add_argument("--num-channels-2to2", nargs="*", type=int, default=[35, 35, 35, 35, 35])
    parser.add_argument("--num-channels-out", nargs="*", type=int, default=[60])
    parser.add_argument("--drop-rate", type=float, default=0.025)
    parser.add_argument("--distribute-eval", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--device", type=str, default="cuda")
    parser.add_argument("--dtype", type=str, default="float")
    args = parser.parse_args()
    out = os.path.join(args.workdir, "model")
    os.makedirs(out, exist_ok=True)
    args.checkfile = os.path.join(out, args.prefix + ".pt")
    args.bestfile = os.path.join(out, args.prefix + "_best.pt")
    args.predictfile = os.path.join(args.workdir, "predict", args.prefix)
    os.makedirs(os.path.dirname(args.predictfile), exist_ok=True)
    return args


def main():
    args = parse_args()

    if "LOCAL_RANK" in os.environ:
        device_id = int(os.environ["LOCAL_RANK"])
    else:
        device_id = -1
    logging.basicConfig(level=logging.INFO if device_id <= 0 else logging.WARNING, format="%(message)s")

    device, dtype = init_cuda(args, device_id)
    args = set_seed(args)

    distributed = get_world_size() > 1
    if distributed:
        logger.info(f"World size {dist.get_world_size()}")

    args, datasets = initialize_datasets(args, args.datadir, num_pts=None)
    collate = lambda data: collate_fn(data, scale=1.0, nobj=None)  # noqa: E731

    if distributed:
        samplers = {
            "train": DistributedSampler(datasets["train"], shuffle=True),
            "valid": DistributedSampler(datasets["valid"], shuffle=False),
            "test": DistributedSampler(datasets["test"], shuffle=False) if args.distribute_eval else None,
        }
    else:
        samplers = {split: None for split in datasets.keys()}

    dataloaders = {
        split: DataLoader(
            dataset,
            batch_size=args.batch_size,
            shuffle=(split == "train" and not distributed),
            num_workers=args.num_workers,
            pin_memory=True,
            collate_fn=collate,
            sampler=samplers[split],
        )
        for split, dataset in datasets.items()
    }

    model = PELICANClassifier(
        args.num_channels_scalar,
        args.num_channels_2to2,
        args.num_channels_out,
        num_classes=args.num_classes,
        drop_rate=args.drop_rate,
        device=device,
        dtype=dtype,
    )
    model.to(device)
    if distributed:
        model = DistributedDataParallel(model, device_ids=[device_id])

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr_init, weight_decay=args.weight_decay)
    total_steps = args.num_epoch * (len(dataloaders["train"]) if args.lr_minibatch else 1)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, total_steps, eta_min=args.lr_final)
    loss_fn = torch.nn.CrossEntropyLoss()

    trainer = Trainer(args, dataloaders, model, loss_fn, metrics, optimizer, scheduler, device_id, device, dtype)
    trainer.train()

    # Test predictions on best model and also last checkpointed model.
    trainer.evaluate(splits=["test"], distributed=distributed and args.distribute_eval)
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
