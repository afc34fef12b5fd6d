"""Throughput benchmark of torchvision classifiers under DistributedDataParallel with apex AMP, on
static (synthetic) data: every process sweeps the same grid of models, per-GPU batch sizes and AMP
opt levels, and for each configuration runs training steps until a time budget and a minimum number
of trials are both reached (`python -m torch.distributed.launch --nproc_per_node=2 ddp_bench.py`).

Thread: https://github.com/pytorch/pytorch/issues/22834 ("Script freezes with no output when using
DistributedDataParallel")
Project: a user benchmark script on PyTorch 1.1 DDP + NVIDIA apex `amp`
What hung: the reporter: "when using DDP, the script gets frozen at a random point. The GPU usage is
stuck at 100% and the process is also using 100% CPU" (gloo "works, but very slow"). The loop he
posted ends each configuration with `if finish-start >= mintime and trial >= mintrials: break`. The
maintainer's diagnosis (pietern): "You have timing code in there. It is possible that one process
exits before the other one, causing the hang. If you do want to rely on timing, make sure to use
timing information ..." (the rest of the comment is not in the copy read). Each process measures its own wall clock, so one rank leaves
the trial loop a trial earlier than the other: it goes on to the next configuration, whose DDP
constructor broadcasts the new model's parameters, while the other rank is still in the gradient
all-reduce of its last trial (or, at the end of the sweep, one process tears its communicator down
while the other still waits -- the reporter's stack ends in `ncclCommDestroy`).
Fix (inferred from the maintainer's advice; the thread has no patch): the stop decision is taken on
rank 0 and broadcast, so every rank runs the same number of trials.
Expected rankcheck finding: RC103 on the `break` that leaves the trial loop after a per-process
number of iterations (a wall-clock test on each rank's own clock).
(Inferred: the model/batch-size/opt-level grid, the CSV report and argparse options; the reporter's
script is described in the thread (models, batch sizes, AMP opt levels, static data) and its inner
loop is quoted.)
"""
import argparse
import csv
import itertools
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torchvision.models as models
from apex import amp
from torch.nn.parallel import DistributedDataParallel


def parse_args():
    parser = argparse.ArgumentParser(description="DDP + AMP throughput sweep")
    parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
    parser.add_argument("--models", nargs="+", default=["resnet50", "resnet101", "densenet121", "vgg16"])
    parser.add_argument("--batch-sizes", nargs="+", type=int, default=[32, 64, 128])
    parser.add_argument("--opt-levels", nargs="+", default=["none", "O1", "O2"])
    parser.add_argument("--inference", action="store_true", help="time forward passes only")
    parser.add_argument("--min-time", type=float, default=10.0, help="seconds per configuration")
    parser.add_argument("--min-trials", type=int, default=20)
    parser.add_argument("--max-trials", type=int, default=1000)
    parser.add_argument("--image-size", type=int, default=224)
    parser.add_argument("--out", default="ddp_bench.csv")
    return parser.parse_args()


def build_model(name: str, num_classes: int = 1000) -> nn.Module:
    return getattr(models, name)(num_classes=num_classes)


def run_config(args, device, model_name, batch_size, opt_level):
    torch.manual_seed(0)
    model = build_model(model_name).to(device)
    criterion = nn.CrossEntropyLoss().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    amp_level = None if opt_level == "none" else opt_level
    if amp_level is not None:
        model, optimizer = amp.initialize(model, optimizer, opt_level=amp_level, verbosity=0)
    model = DistributedDataParallel(model, device_ids=[args.local_rank], output_device=args.local_rank)

    # static data: the same batch every step
    xs = torch.randn(batch_size, 3, args.image_size, args.image_size, device=device)
    targets = torch.randint(0, 1000, (batch_size,), device=device)

    # warm-up step (cudnn autotuning, DDP bucket rebuild)
    optimizer.zero_grad()
    criterion(model(xs), targets).backward()
    optimizer.step()
    torch.cuda.synchronize(device)

    start = time.time()
    trial = 0
    for trial in range(args.max_trials):
        if args.inference:
            with torch.no_grad():
                model(xs)
        else:
            optimizer.zero_grad()
            ys = model(xs)
            loss = criterion(ys, targets)
            if amp_level is not None:
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
            optimizer.step()
        torch.cuda.synchronize(device)
        finish = time.time()
        if finish - start >= args.min_time and trial >= args.min_trials:
            break  # expect: RC103
    elapsed = time.time() - start
    images_per_sec = (trial + 1) * batch_size / elapsed
    del model, optimizer
    torch.cuda.empty_cache()
    return trial + 1, elapsed, images_per_sec


def main():
    args = parse_args()
    torch.cuda.set_device(args.local_rank)
    device = torch.device("cuda", args.local_rank)
    dist.init_process_group(backend="nccl", init_method="env://")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    torch.backends.cudnn.benchmark = True

    rows = []
    for model_name, batch_size, opt_level in itertools.product(args.models, args.batch_sizes, args.opt_levels):
        trials, elapsed, ips = run_config(args, device, model_name, batch_size, opt_level)
        if rank == 0:
            print(f"{model_name:>12} bs={batch_size:<4} amp={opt_level:<4} trials={trials:<5} "
                  f"{elapsed:7.2f}s {ips * world_size:10.1f} img/s (global)", flush=True)
            rows.append(dict(model=model_name, batch_size=batch_size, opt_level=opt_level, trials=trials,
                             seconds=round(elapsed, 3), images_per_sec=round(ips * world_size, 1),
                             world_size=world_size, inference=args.inference))

    if rank == 0:
        with open(args.out, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            writer.writeheader()
            writer.writerows(rows)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
