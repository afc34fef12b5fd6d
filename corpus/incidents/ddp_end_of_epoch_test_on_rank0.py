"""Particle-flow reconstruction (MLPF) trained with DDP: at the end of every epoch, rank 0 runs the
test-set predictions and makes the validation plots.

Thread: https://github.com/jpata/particleflow/pull/391 ("fix: multi-gpu hang"; issue #390)
Project: jpata/particleflow
What hung: "When using more than 1 GPU a NCCL timeout error was raised at the end of the first epoch.
The issue was not present if I commented out the entire if-block that runs the end-of-epoch tests,
including calls to the `run_predictions()` and `make_plots()` functions." The predictions run the
DDP-wrapped model on rank 0 alone; the first DDP forward after a training step broadcasts the
module buffers even under `no_grad` (DDP syncs buffers before a forward that follows a gradient
forward), a collective the other ranks never join.
Fix (the PR): "Moving the call to `run_test()` ... to run on all GPUs instead of just rank 0 solved
the issue" -- and, the maintainer noted, each rank now evaluates its own split of the test set.
Expected rankcheck finding: RC101 on the rank-0-only `run_test(...)` call, which reaches the DDP
forward in `run_predictions`.
"""
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


@torch.no_grad()
def run_predictions(rank, model, loader, outdir):
    model.eval()
    preds = []
    for i, batch in enumerate(loader):
        X = batch["X"].to(rank)
        mask = batch["mask"].to(rank)
        ypred = model(X, mask)
        preds.append({k: v.cpu() for k, v in ypred.items()})
    torch.save(preds, os.path.join(outdir, f"preds_rank{rank}.pt"))
    model.train()


def make_plots(outdir, epoch):
    preds = torch.load(os.path.join(outdir, "preds_rank0.pt"))
    print(f"epoch {epoch}: made plots from {len(preds)} batches")


def run_test(rank, world_size, model, test_loader, outdir, epoch):
    run_predictions(rank, model, test_loader, outdir)
    if rank == 0:
        make_plots(outdir, epoch)


def train(rank, world_size, args, model, train_set, test_set, loss_fn):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    model = DDP(model.to(rank), device_ids=[rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    train_loader = DataLoader(train_set, batch_size=args.bs, sampler=DistributedSampler(train_set))
    test_loader = DataLoader(test_set, batch_size=args.bs)
    for epoch in range(args.num_epochs):
        train_loader.sampler.set_epoch(epoch)
        for batch in train_loader:
            loss = loss_fn(model(batch["X"].to(rank), batch["mask"].to(rank)), batch)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if rank == 0:
            run_test(rank, world_size, model, test_loader, args.outdir, epoch)  # expect: RC101
    dist.destroy_process_group()


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--num-epochs", dest="num_epochs", type=int, default=50)
    parser.add_argument("--bs", type=int, default=16)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--outdir", default="experiments/run")
    return parser.parse_args()
