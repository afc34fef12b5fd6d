"""RETURNN's evaluation on rank 0 only (returnn#1454): the loaders are DataLoaders over the
project's IterDataPipes, kept in a list. Making a DataLoader iterator over an
IterDataPipe in a job with a process group broadcasts the pipe's shared seed from rank 0, so the
`for` over an eval loader is a collective only rank 0 enters; the others meet it at their next
`iter(train_loader)`. The look-alike where every rank evaluates is in
safe_datapipe_loader_iterated_on_every_rank.py."""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, IterDataPipe


class BatchingPipe(IterDataPipe):
    def __init__(self, source, batch_size):
        self.source = source
        self.batch_size = batch_size

    def __iter__(self):
        batch = []
        for item in self.source:
            batch.append(item)
            if len(batch) == self.batch_size:
                yield torch.stack(batch)
                batch = []


def make_loader(source, batch_size):
    return DataLoader(BatchingPipe(source, batch_size), batch_size=None)


def evaluate(model, loaders):
    for index, loader in enumerate(loaders):
        for batch in loader:
            print(index, model(batch).mean().item())


def train(model, optimizer, train_source, eval_sources, epochs):
    train_loader = make_loader(train_source, 8)
    loaders = []
    for source in eval_sources:
        loaders.append(make_loader(source, 8))
    for _ in range(epochs):
        for batch in iter(train_loader):
            optimizer.zero_grad()
            model(batch).mean().backward()
            optimizer.step()
        if dist.get_rank() == 0:
            evaluate(model, loaders)  # expect: RC101
