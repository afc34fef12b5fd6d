"""The loader over this rank's shards is built in `main` and handed to `train_one_epoch`, which
loops over it: the helper runs as many steps as the loader has batches on that rank, each with
DDP's gradient all-reduce, whoever calls it."""
import torch
import torch.distributed as dist
import webdataset as wds
from torch.nn.parallel import DistributedDataParallel as DDP


def train_one_epoch(model, optimizer, train_dl):
    for step, (x, y) in enumerate(train_dl):  # expect: RC103
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main(urls, epochs=10):
    dist.init_process_group("gloo")
    model = DDP(torch.nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    dataset = wds.WebDataset(urls, nodesplitter=wds.split_by_node).decode("torch").to_tuple("x.pth", "y.pth")
    train_dl = torch.utils.data.DataLoader(dataset.batched(32), batch_size=None)
    for _ in range(epochs):
        train_one_epoch(model, optimizer, train_dl)
