"""Entry point: train, then evaluate after every epoch; all ranks meet in a barrier afterwards."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from distributed import init_distributed_device
from train import evaluate, train_one_epoch


def main(args, model, data, loss_fn, optimizer, scheduler, tokenizer):
    args = init_distributed_device(args)
    model = model.to(args.device)
    if args.distributed:
        model = DistributedDataParallel(model, device_ids=[args.local_rank])
    for epoch in range(args.epochs):
        train_one_epoch(model, data, loss_fn, epoch, optimizer, scheduler, args)
        completed_epoch = epoch + 1
        evaluate(model, data, completed_epoch, args, tokenizer=tokenizer)
        if args.distributed:
            dist.barrier()
