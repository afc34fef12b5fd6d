"""Each rank resumes from a progress file of its own (`progress_rank{rank}.pt`), written after every
epoch. A job killed while the ranks were writing leaves files of different epochs, and the ranks
then run different numbers of epochs of DDP forwards: the ones with fewer stop while the others
wait in the next all-reduce."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def train(args, loader):
    rank = dist.get_rank()
    model = DDP(torch.nn.Linear(8, 2))
    progress = torch.load(f"{args.ckpt_dir}/progress_rank{rank}.pt")
    start_epoch = progress["epoch"]
    for epoch in range(start_epoch, args.epochs):  # expect: RC103
        for x in loader:
            model(x).sum().backward()
        torch.save({"epoch": epoch + 1}, f"{args.ckpt_dir}/progress_rank{rank}.pt")
