"""Image classification with DDP using a hook-based runner: one process per GPU
(torch.distributed.launch), early stopping on the validation loss.

The epoch loop that some ranks leave early is in ppln_lite/runner.py (see the docstring there for
the thread and the expected finding); the per-rank metric comes from ppln_lite/hooks.py.
"""
import argparse
import logging
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torchvision import datasets, models, transforms

from ppln_lite.batch_processor import ClassificationBatchProcessor
from ppln_lite.hooks import CheckpointHook, EarlyStoppingHook, LogBufferHook, OptimizerHook
from ppln_lite.runner import Runner


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_root", required=True)
    parser.add_argument("--work_dir", default="work_dirs/resnet18")
    parser.add_argument("--arch", default="resnet18")
    parser.add_argument("--num_classes", type=int, default=100)
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--max_epochs", type=int, default=90)
    parser.add_argument("--patience", type=int, default=5)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
    return parser.parse_args()


def build_loaders(args):
    normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    train_tf = transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(),
                                   transforms.ToTensor(), normalize])
    val_tf = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(), normalize])
    train_set = datasets.ImageFolder(os.path.join(args.data_root, "train"), train_tf)
    val_set = datasets.ImageFolder(os.path.join(args.data_root, "val"), val_tf)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=DistributedSampler(train_set),
                              num_workers=args.workers, pin_memory=True, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=args.batch_size, sampler=DistributedSampler(val_set, shuffle=False),
                            num_workers=args.workers, pin_memory=True)
    return {"train": train_loader, "val": val_loader}


def main():
    args = parse_args()
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group(backend="nccl", init_method="env://")
    device = torch.device("cuda", args.local_rank)

    logging.basicConfig(level=logging.INFO if dist.get_rank() == 0 else logging.WARNING)
    logger = logging.getLogger("train")

    model = getattr(models, args.arch)(num_classes=args.num_classes).to(device)
    model = DistributedDataParallel(model, device_ids=[args.local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.max_epochs)

    hooks = [
        OptimizerHook(grad_clip=5.0),
        LogBufferHook(),
        EarlyStoppingHook(metric_name="base_loss", patience=args.patience, mode="min"),
        CheckpointHook(metric_name="base_loss", mode="min"),
    ]
    runner = Runner(model, {"base": optimizer}, {"base": scheduler}, ClassificationBatchProcessor(device),
                    hooks, args.work_dir, logger)
    runner.run(build_loaders(args), args.max_epochs)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
