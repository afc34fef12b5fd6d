"""The first-batch hang: the model is moved to the GPU (CUDA initialised), then a DataLoader forks
its workers; once in the same function, once in a helper the script calls later."""
import torch
from torch.utils.data import DataLoader


def build_loader(dataset, workers):
    return DataLoader(dataset, batch_size=32, num_workers=workers)  # expect: RC203


def main(model, dataset):
    device = torch.device("cuda", 0)
    model = model.to(device)
    loader = DataLoader(dataset, batch_size=32, num_workers=4, pin_memory=True)  # expect: RC203
    eval_loader = build_loader(dataset, 2)
    for batch in loader:
        model(batch.cuda())
    return eval_loader


if __name__ == "__main__":
    main(torch.nn.Linear(4, 4), list(range(8)))
