"""The same helper given a loader over a DistributedSampler, which pads every rank's share to the
same length: the helper's loop runs the same number of steps on every rank."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def train_one_epoch(model, optimizer, train_dl):
    for step, (x, y) in enumerate(train_dl):
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main(epochs=10):
    dist.init_process_group("gloo")
    model = DDP(torch.nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    dataset = TensorDataset(torch.randn(1000, 16), torch.randn(1000, 1))
    train_dl = DataLoader(dataset, batch_size=32, sampler=DistributedSampler(dataset))
    for _ in range(epochs):
        train_one_epoch(model, optimizer, train_dl)
