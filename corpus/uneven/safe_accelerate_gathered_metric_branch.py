"""With Accelerate, predictions are combined with `accelerator.gather_for_metrics`; the accuracy computed from them is the same on every rank, so branching on it before `wait_for_everyone()` is safe."""
import argparse

import torch
import torch.nn as nn
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args()

    accelerator = Accelerator()
    ds = TensorDataset(torch.load("x.pt"), torch.load("y.pt"))
    model = nn.Linear(30, 4)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    train_dl = DataLoader(ds, batch_size=32, shuffle=True)
    val_dl = DataLoader(ds, batch_size=128)
    model, opt, train_dl, val_dl = accelerator.prepare(model, opt, train_dl, val_dl)
    best = 0.0
    for epoch in range(args.epochs):
        for x, y in train_dl:
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            accelerator.backward(loss)
            opt.step()
        hits, total = 0, 0
        with torch.no_grad():
            for x, y in val_dl:
                preds, labels = accelerator.gather_for_metrics((model(x).argmax(-1), y))
                hits += int((preds == labels).sum())
                total += len(labels)
        accuracy = hits / total
        if accuracy > best:
            best = accuracy
            accelerator.wait_for_everyone()
            accelerator.save_model(model, "best")
    accelerator.print(f"best accuracy {best:.4f}")


if __name__ == "__main__":
    main()
