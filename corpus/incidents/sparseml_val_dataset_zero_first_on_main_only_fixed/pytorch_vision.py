"""Safe twin of sparseml_val_dataset_zero_first_on_main_only: as in the merged fix of sparseml#29,
the validation dataset, which only the main process creates, is no longer built inside
`torch_distributed_zero_first`, so the main process enters no barrier the other ranks skip.

Thread: https://github.com/neuralmagic/sparseml/pull/29
"""
import argparse
import os

import torch
from sparseml.pytorch.datasets import DatasetRegistry
from sparseml.pytorch.models import ModelRegistry
from sparseml.pytorch.optim import ScheduledModifierManager, ScheduledOptimizer
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from sparseml_utils.helpers import model_to_device, torch_distributed_zero_first

TRAIN_COMMAND = "train"
LR_SENSITIVITY_COMMAND = "lr_sensitivity"


def parse_args():
    parser = argparse.ArgumentParser(description="Train or analyze an image classification model")
    parser.add_argument("--local_rank", type=int, default=-1)  # injected by torch.distributed.launch
    parser.add_argument("command", choices=[TRAIN_COMMAND, LR_SENSITIVITY_COMMAND])
    parser.add_argument("--arch-key", dest="arch_key", required=True)
    parser.add_argument("--pretrained", default=True)
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--dataset-path", dest="dataset_path", required=True)
    parser.add_argument("--recipe-path", dest="recipe_path", required=True)
    parser.add_argument("--train-batch-size", dest="train_batch_size", type=int, default=256)
    parser.add_argument("--test-batch-size", dest="test_batch_size", type=int, default=256)
    parser.add_argument("--lr", type=float, default=0.1)
    return parser.parse_args()


def parse_ddp_args(args):
    args.world_size = int(os.environ["WORLD_SIZE"]) if "WORLD_SIZE" in os.environ else 1
    args.rank = int(os.environ["RANK"]) if "RANK" in os.environ else -1
    args.is_main_process = args.rank in [-1, 0]  # non DDP execution or 0th DDP process
    args.train_batch_size = args.train_batch_size // args.world_size
    return args


def _create_train_dataset_and_loader(args, image_size):
    with torch_distributed_zero_first(args.local_rank):  # only download once locally
        train_dataset = DatasetRegistry.create(args.dataset, root=args.dataset_path, train=True,
                                               rand_trans=True, image_size=image_size)
    sampler = DistributedSampler(train_dataset) if args.rank != -1 else None
    train_loader = DataLoader(train_dataset, batch_size=args.train_batch_size, shuffle=sampler is None,
                              num_workers=4, pin_memory=True, sampler=sampler)
    return train_dataset, train_loader


def _create_val_dataset_and_loader(args, image_size):
    if args.command == LR_SENSITIVITY_COMMAND or not (args.is_main_process and args.dataset != "imagefolder"):
        return None, None
    val_dataset = DatasetRegistry.create(args.dataset, root=args.dataset_path, train=False,
                                         rand_trans=False, image_size=image_size)
    val_loader = DataLoader(val_dataset, batch_size=args.test_batch_size, shuffle=False, num_workers=4)
    return val_dataset, val_loader


def train(args, model, train_loader):
    if args.rank == -1:
        device, ddp = "cuda" if torch.cuda.is_available() else "cpu", False
    else:
        torch.cuda.set_device(args.local_rank)
        device, ddp = args.local_rank, True
    model, device, _ = model_to_device(model, device, ddp=ddp)
    optim = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, nesterov=True)
    manager = ScheduledModifierManager.from_yaml(args.recipe_path)
    optim = ScheduledOptimizer(optim, model, manager, steps_per_epoch=len(train_loader))
    loss_fn = torch.nn.CrossEntropyLoss()
    for epoch in range(int(manager.max_epochs)):
        if args.rank != -1:
            train_loader.sampler.set_epoch(epoch)
        model.train()
        for images, labels in train_loader:
            loss = loss_fn(model(images.to(device)), labels.to(device))
            optim.zero_grad()
            loss.backward()
            optim.step()


def main(args):
    image_size = ModelRegistry.input_shape(args.arch_key)[1]
    train_dataset, train_loader = _create_train_dataset_and_loader(args, image_size)
    val_dataset, val_loader = _create_val_dataset_and_loader(args, image_size)
    if args.dataset == "imagefolder":
        num_classes = (val_dataset or train_dataset).num_classes
    else:
        num_classes = DatasetRegistry.attributes(args.dataset)["num_classes"]
    with torch_distributed_zero_first(args.local_rank):  # only download once locally
        model = ModelRegistry.create(args.arch_key, args.pretrained, num_classes=num_classes)
    if args.command == TRAIN_COMMAND:
        train(args, model, train_loader)


if __name__ == "__main__":
    args_ = parse_ddp_args(parse_args())
    if args_.local_rank != -1:
        torch.distributed.init_process_group(backend="nccl", init_method="env://")
    main(args_)
