"""The loader is built before the model goes to the GPU, but its workers fork when the epoch loop
iterates it, after: building it first does not help."""
from torch.utils.data import DataLoader


def train(model, dataset, epochs):
    loader = DataLoader(dataset, batch_size=8, num_workers=4)  # expect: RC203
    model = model.cuda()
    for _ in range(epochs):
        for batch in loader:
            model(batch)


def evaluate(model, dataset):
    loader = DataLoader(dataset, batch_size=8, num_workers=2)  # expect: RC203
    model.to("cuda")
    for step, batch in enumerate(loader):
        model(batch)
