"""The look-alike of rc101_datapipe_loader_iterated_on_rank_zero_only.py that does not hang (the
fix of returnn#1454): every rank evaluates, so every rank makes each eval loader's iterator and
takes part in the seed broadcast it issues."""
import torch
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
        evaluate(model, loaders)
