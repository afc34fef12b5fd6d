"""Mixed-precision ImageNet training with apex's DistributedDataParallel, as in apex's
examples/imagenet of mid-2018 (`python -m torch.distributed.launch --nproc_per_node=4 main_amp.py
-a resnet50 --fp16 --static-loss-scale 128 /data/imagenet`).

Thread: https://github.com/NVIDIA/apex/issues/19 ("Training deadlock"), fixed by
https://github.com/NVIDIA/apex/pull/18 ("Fixed deadlock issue", merged as 68c96f4)
Project: NVIDIA/apex (apex/parallel/distributed.py)
What hung: the reporter: "in the method `flat_dist_call`, there is a for loop over a dictionary with
calls to collective operations (like broadcasting) in the body. Since the ordering of the
dictionary's keys is random, we obtain non-matching calls to the collective operations, which
induce a deadlock of the processes." With the fp16 network (batch norm kept in fp32) the
parameters and gradients fall into two buckets, HalfTensor and FloatTensor; each process walks the
buckets in its own order, so rank 0 broadcasts (and later all-reduces) its flat fp16 buffer while
another rank posts its flat fp32 buffer of a different length as the matching collective: the
parameter broadcast in the DDP constructor and every gradient all-reduce pair buffers of different
dtype and size, and the processes block (or exchange garbage) from the first step.
Fix (the PR, merged): the buckets are an `OrderedDict`, filled in the order the tensors are given
-- the module's parameter order, the same on every process -- so every process issues the
collectives in the same order with the same buffers.
Expected rankcheck finding: RC104 on the collective in `flat_dist_call`
(apex_lite/parallel/distributed.py), whose flat buffer's dtype and length at each position of the
collective sequence depend on a per-process iteration order.
(Adapted: the torch 0.4 distributed API (`dist._backend`) is written with today's
`dist.get_backend()`; the dict of the 2018 code, hash-ordered on Python 3.5, is a set of type names
here so that the per-process order survives on Python 3.11 -- see the module docstring. Trimmed:
DDP's overlapping bucket path, which calls `flat_dist_call` on each ready bucket the same way;
the FP16_Optimizer is reduced to master copies with a static loss scale.)
"""
import argparse
import os
import shutil
import time

import torch
import torch.backends.cudnn as cudnn
import torch.distributed as dist
import torch.nn as nn
import torch.utils.data
import torch.utils.data.distributed
import torchvision.datasets as datasets
import torchvision.models as models
import torchvision.transforms as transforms

from apex_lite.fp16_utils import (
    master_params_to_model_params,
    model_grads_to_master_grads,
    network_to_half,
    prep_param_lists,
)
from apex_lite.parallel import DistributedDataParallel as DDP

model_names = sorted(name for name in models.__dict__
                     if name.islower() and not name.startswith("__") and callable(models.__dict__[name]))


def parse_args():
    parser = argparse.ArgumentParser(description="PyTorch ImageNet Training (apex DDP + fp16)")
    parser.add_argument("data", metavar="DIR", help="path to dataset")
    parser.add_argument("--arch", "-a", metavar="ARCH", default="resnet18", choices=model_names)
    parser.add_argument("-j", "--workers", default=4, type=int)
    parser.add_argument("--epochs", default=90, type=int)
    parser.add_argument("--start-epoch", default=0, type=int)
    parser.add_argument("-b", "--batch-size", default=256, type=int, help="per-process batch size")
    parser.add_argument("--lr", "--learning-rate", default=0.1, type=float)
    parser.add_argument("--momentum", default=0.9, type=float)
    parser.add_argument("--weight-decay", "--wd", default=1e-4, type=float)
    parser.add_argument("--print-freq", "-p", default=10, type=int)
    parser.add_argument("--resume", default="", type=str, metavar="PATH")
    parser.add_argument("--fp16", action="store_true", help="run model in fp16 mode")
    parser.add_argument("--static-loss-scale", type=float, default=1.0)
    parser.add_argument("--dist-url", default="env://", type=str)
    parser.add_argument("--dist-backend", default="nccl", type=str)
    parser.add_argument("--local_rank", default=0, type=int)
    return parser.parse_args()


class AverageMeter:
    def __init__(self):
        self.reset()

    def reset(self):
        self.val = self.avg = self.sum = 0.0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def reduce_tensor(tensor, world_size):
    rt = tensor.clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    return rt / world_size


def accuracy(output, target, topk=(1,)):
    maxk = max(topk)
    batch_size = target.size(0)
    _, pred = output.topk(maxk, 1, True, True)
    pred = pred.t()
    correct = pred.eq(target.view(1, -1).expand_as(pred))
    return [correct[:k].reshape(-1).float().sum(0, keepdim=True).mul_(100.0 / batch_size) for k in topk]


def adjust_learning_rate(optimizer, epoch, args):
    lr = args.lr * (0.1 ** (epoch // 30))
    for param_group in optimizer.param_groups:
        param_group["lr"] = lr


def train(train_loader, model, criterion, optimizer, epoch, args, model_params, master_params):
    batch_time, losses, top1 = AverageMeter(), AverageMeter(), AverageMeter()
    model.train()
    end = time.time()
    for i, (input, target) in enumerate(train_loader):
        input = input.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)

        output = model(input)
        loss = criterion(output.float(), target)
        prec1 = accuracy(output.float().data, target, topk=(1,))[0]

        if args.fp16:
            model.zero_grad()
            (loss * args.static_loss_scale).backward()
            model_grads_to_master_grads(model_params, master_params)
            for param in master_params:
                param.grad.data.mul_(1.0 / args.static_loss_scale)
            optimizer.step()
            master_params_to_model_params(model_params, master_params)
        else:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

        if args.distributed:
            reduced_loss = reduce_tensor(loss.data, args.world_size)
            prec1 = reduce_tensor(prec1, args.world_size)
        else:
            reduced_loss = loss.data
        losses.update(reduced_loss.item(), input.size(0))
        top1.update(prec1.item(), input.size(0))
        batch_time.update(time.time() - end)
        end = time.time()

        if args.local_rank == 0 and i % args.print_freq == 0:
            print(f"Epoch: [{epoch}][{i}/{len(train_loader)}]\t"
                  f"Time {batch_time.val:.3f} ({batch_time.avg:.3f})\t"
                  f"Loss {losses.val:.4f} ({losses.avg:.4f})\tPrec@1 {top1.val:.3f} ({top1.avg:.3f})")


def validate(val_loader, model, criterion, args):
    losses, top1 = AverageMeter(), AverageMeter()
    model.eval()
    with torch.no_grad():
        for input, target in val_loader:
            input = input.cuda(non_blocking=True)
            target = target.cuda(non_blocking=True)
            output = model(input)
            loss = criterion(output.float(), target)
            prec1 = accuracy(output.float().data, target, topk=(1,))[0]
            if args.distributed:
                loss = reduce_tensor(loss.data, args.world_size)
                prec1 = reduce_tensor(prec1, args.world_size)
            losses.update(loss.item(), input.size(0))
            top1.update(prec1.item(), input.size(0))
    if args.local_rank == 0:
        print(f" * Prec@1 {top1.avg:.3f}  Loss {losses.avg:.4f}")
    return top1.avg


def save_checkpoint(state, is_best, filename="checkpoint.pth.tar"):
    torch.save(state, filename)
    if is_best:
        shutil.copyfile(filename, "model_best.pth.tar")


def main():
    args = parse_args()
    args.distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    args.world_size = 1
    if args.distributed:
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group(backend=args.dist_backend, init_method=args.dist_url)
        args.world_size = dist.get_world_size()
    cudnn.benchmark = True

    model = models.__dict__[args.arch]().cuda()
    if args.fp16:
        model = network_to_half(model)
    if args.distributed:
        # broadcasts every parameter from rank 0, one flat buffer per tensor type
        model = DDP(model)

    model_params, master_params = None, list(model.parameters())
    if args.fp16:
        model_params, master_params = prep_param_lists(model)

    criterion = nn.CrossEntropyLoss().cuda()
    optimizer = torch.optim.SGD(master_params, args.lr, momentum=args.momentum, weight_decay=args.weight_decay)

    best_prec1 = 0.0
    if args.resume and os.path.isfile(args.resume):
        checkpoint = torch.load(args.resume, map_location=lambda storage, loc: storage.cuda(args.local_rank))
        args.start_epoch = checkpoint["epoch"]
        best_prec1 = checkpoint["best_prec1"]
        model.load_state_dict(checkpoint["state_dict"])
        optimizer.load_state_dict(checkpoint["optimizer"])

    normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    train_dataset = datasets.ImageFolder(os.path.join(args.data, "train"), transforms.Compose([
        transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(), transforms.ToTensor(), normalize]))
    val_dataset = datasets.ImageFolder(os.path.join(args.data, "val"), transforms.Compose([
        transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(), normalize]))
    train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset) if args.distributed else None
    val_sampler = torch.utils.data.distributed.DistributedSampler(val_dataset, shuffle=False) if args.distributed else None
    train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=args.batch_size,
                                               shuffle=(train_sampler is None), num_workers=args.workers,
                                               pin_memory=True, sampler=train_sampler)
    val_loader = torch.utils.data.DataLoader(val_dataset, batch_size=args.batch_size, shuffle=False,
                                             num_workers=args.workers, pin_memory=True, sampler=val_sampler)

    for epoch in range(args.start_epoch, args.epochs):
        if args.distributed:
            train_sampler.set_epoch(epoch)
        adjust_learning_rate(optimizer, epoch, args)
        train(train_loader, model, criterion, optimizer, epoch, args, model_params, master_params)
        prec1 = validate(val_loader, model, criterion, args)
        if args.local_rank == 0:
            is_best = prec1 > best_prec1
            best_prec1 = max(prec1, best_prec1)
            save_checkpoint({"epoch": epoch + 1, "arch": args.arch, "state_dict": model.state_dict(),
                             "best_prec1": best_prec1, "optimizer": optimizer.state_dict()}, is_best)


if __name__ == "__main__":
    main()
