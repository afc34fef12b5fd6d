"""Multi-label classifier trained with plain PyTorch DDP on data too large for memory: the parquet files are
streamed with `load_dataset(..., streaming=True)` and split across processes with
`datasets.distributed.split_dataset_by_node`. Launched as `torchrun --nproc_per_node 4
datasets_split_by_node_uneven_ddp_train.py --data-dir /data/features`.

Thread: https://github.com/huggingface/datasets/issues/6437 ("Problem in training iterable dataset", open)
Project: huggingface/datasets (datasets.distributed.split_dataset_by_node on an IterableDataset) with torch DDP
What hung: the reporter: "this distribution results in different processes having different amounts of data to
train on. As a result, when the earliest process finishes training and starts predicting on the test set, other
processes are still training". Maintainer (lhoestq): "`split_dataset_by_node` doesn't give the exact same number
of examples to each node in the case of iterable datasets ... If the shards don't contain the same number of
examples, then some workers might end up with more examples than others." The process whose shard ran out leaves
the `for batch_idx, data in enumerate(train_loader)` loop and reaches the test stage's all_reduce while the
others wait in the DDP gradient all-reduce of their next `loss.backward()`.
Fix (reporter, confirmed in the thread): "I finally solve it by using the
torch.distributed.algorithms.join.Join" (with the DDP model; "I have tried barrier() to solve the problem but I
failed"). The twin wraps the training loop in `Join([model])`, so processes that run out of data shadow the
gradient all-reduces of the others until every process has finished its shard.
Expected rankcheck finding: RC103 on the `for batch_idx, data in enumerate(train_loader):` loop of `train`, whose
trip count is this process's share of the streamed dataset and whose body runs the DDP forward/backward.
Inferred: the thread shows only `train` (X/y columns, 28-dim targets, log interval); the parquet layout, the MLP
(with BatchNorm), BCE loss, the test function (evaluating `model.module` and all-reducing the counts) and the
argument names are invented; the thread calls the symptom "very slow" before the Join fix, read here as the
stalled collective.
"""
import argparse
import glob
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from datasets import load_dataset
from datasets.distributed import split_dataset_by_node
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader

NUM_LABELS = 28


def parse_args():
    parser = argparse.ArgumentParser(description="Streaming multi-label training with DDP")
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--test-batch-size", type=int, default=1024)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--log-interval", type=int, default=100)
    parser.add_argument("--num-workers", type=int, default=4)
    parser.add_argument("--train-length", type=int, default=10_000_000, help="approximate, for logging only")
    return parser.parse_args()


class Net(nn.Module):
    def __init__(self, in_dim=1024, hidden=2048, out_dim=NUM_LABELS):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(in_dim, hidden), nn.BatchNorm1d(hidden), nn.ReLU(),
            nn.Linear(hidden, hidden // 2), nn.BatchNorm1d(hidden // 2), nn.ReLU(),
            nn.Linear(hidden // 2, out_dim),
        )

    def forward(self, x):
        return self.layers(x)


def build_loader(files, rank, world_size, batch_size, num_workers, shuffle):
    ds = load_dataset("parquet", data_files=files, split="train", streaming=True)
    if shuffle:
        ds = ds.shuffle(seed=42, buffer_size=10_000)
    ds = split_dataset_by_node(ds, rank=rank, world_size=world_size)
    ds = ds.with_format("torch")
    return DataLoader(ds, batch_size=batch_size, num_workers=num_workers)


def train(args, model, device, train_loader, optimizer, criterion, epoch, length):
    model.train()
    idx_length = 0
    for batch_idx, data in enumerate(train_loader):  # expect: RC103
        s_time = time.time()
        X = data["X"]
        target = data["y"].reshape(-1, NUM_LABELS)
        X, target = X.to(device), target.to(device).float()
        optimizer.zero_grad()
        output = model(X)
        loss = criterion(output, target)
        loss.backward()
        optimizer.step()
        idx_length += 1
        if batch_idx % args.log_interval == 0:
            print("Train Epoch: {} Batch_idx: {} Process: {} [{}/{}]\tLoss: {:.6f}\tTime: {:.3f}s".format(
                epoch, batch_idx, dist.get_rank(), batch_idx * len(X), length // dist.get_world_size(),
                loss.item(), time.time() - s_time))
    return idx_length


def test(model, device, test_loader, criterion):
    net = model.module
    net.eval()
    stats = torch.zeros(3, device=device)  # loss sum, correct labels, label count
    with torch.no_grad():
        for data in test_loader:
            X = data["X"].to(device)
            target = data["y"].reshape(-1, NUM_LABELS).to(device).float()
            output = net(X)
            stats[0] += criterion(output, target).item() * len(X)
            stats[1] += ((output > 0).float() == target).sum()
            stats[2] += target.numel()
    dist.all_reduce(stats, op=dist.ReduceOp.SUM)
    return (stats[0] / (stats[2] / NUM_LABELS)).item(), (stats[1] / stats[2]).item()


def main():
    args = parse_args()
    dist.init_process_group(backend="nccl")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)

    train_files = sorted(glob.glob(os.path.join(args.data_dir, "train-*.parquet")))
    test_files = sorted(glob.glob(os.path.join(args.data_dir, "test-*.parquet")))
    train_loader = build_loader(train_files, rank, world_size, args.batch_size, args.num_workers, shuffle=True)
    test_loader = build_loader(test_files, rank, world_size, args.test_batch_size, args.num_workers, shuffle=False)

    model = DDP(Net().to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    criterion = nn.BCEWithLogitsLoss()

    for epoch in range(1, args.epochs + 1):
        train_loader.dataset.set_epoch(epoch)
        steps = train(args, model, device, train_loader, optimizer, criterion, epoch, args.train_length)
        test_loss, test_acc = test(model, device, test_loader, criterion)
        if rank == 0:
            print(f"Epoch {epoch}: {steps} steps on rank 0, test loss {test_loss:.4f}, label accuracy {test_acc:.4f}")
            torch.save(model.module.state_dict(), f"model_epoch{epoch}.pt")

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
