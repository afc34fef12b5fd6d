"""Safe twin of ddp_end_of_epoch_test_on_rank0.py: every rank runs `run_test` on its own split of the
test set (DistributedSampler); only the plotting stays on rank 0.

Thread: https://github.com/jpata/particleflow/pull/391
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
    test_loader = DataLoader(test_set, batch_size=args.bs, sampler=DistributedSampler(test_set, shuffle=False))
    for epoch in range(args.num_epochs):
        train_loader.sampler.set_epoch(epoch)
        for batch in train_loader:
            loss = loss_fn(model(batch["X"].to(rank), batch["mask"].to(rank)), batch)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        run_test(rank, world_size, model, test_loader, args.outdir, epoch)
    dist.destroy_process_group()


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--num-epochs", dest="num_epochs", type=int, default=50)
    parser.add_argument("--bs", type=int, default=16)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--outdir", default="experiments/run")
    return parser.parse_args()
