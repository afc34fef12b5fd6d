"""The ImageNet example's resume: each process loads the one checkpoint onto its own GPU
(`map_location=f"cuda:{gpu}"`) and starts from its epoch. Where the tensors land differs per rank;
the epoch read from the file does not, so every rank runs the same epochs and their all-reduces."""
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP


def main_worker(gpu, args, loader):
    dist.init_process_group("nccl", rank=gpu, world_size=args.world_size)
    model = DDP(torch.nn.Linear(8, 2).cuda(gpu), device_ids=[gpu])
    start_epoch = 0
    if args.resume:
        checkpoint = torch.load(args.resume, map_location=f"cuda:{gpu}")
        start_epoch = checkpoint["epoch"]
        model.load_state_dict(checkpoint["state_dict"])
    for epoch in range(start_epoch, args.epochs):
        epoch_loss = torch.zeros(1, device=f"cuda:{gpu}")
        for x in loader:
            loss = model(x.cuda(gpu)).sum()
            loss.backward()
            epoch_loss += loss.detach()
        dist.all_reduce(epoch_loss)


def main(args, loader):
    mp.spawn(main_worker, nprocs=args.world_size, args=(args, loader))
