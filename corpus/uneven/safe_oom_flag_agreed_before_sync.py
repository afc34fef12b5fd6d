"""Fix for the OOM-skip: the try covers only the local forward/backward (plain module, no collective); the OOM flag is all-reduced with MAX, and all ranks skip the gradient sync together."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local-rank", type=int, default=0)
    args = parser.parse_args()

    dist.init_process_group("nccl")
    torch.cuda.set_device(args.local_rank)
    dataset = torch.load("images.pt")
    loader = DataLoader(dataset, batch_size=1, sampler=DistributedSampler(dataset))
    model = nn.Sequential(nn.Conv2d(3, 64, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 100)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    oom = torch.zeros(1, device="cuda")
    for image, label in loader:
        oom.zero_()
        opt.zero_grad()
        try:
            loss = nn.functional.cross_entropy(model(image.cuda()), label.cuda())
            loss.backward()
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()
            oom.fill_(1.0)
        dist.all_reduce(oom, op=dist.ReduceOp.MAX)
        if oom.item() > 0:
            continue
        for p in model.parameters():
            dist.all_reduce(p.grad)
            p.grad /= dist.get_world_size()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
