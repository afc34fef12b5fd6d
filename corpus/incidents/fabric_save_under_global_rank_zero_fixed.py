"""Safe twin of fabric_save_under_global_rank_zero.py: every rank calls `fabric.save`, which decides
itself which ranks write.

Thread: https://github.com/Lightning-AI/pytorch-lightning/issues/19780
"""
import argparse

import lightning as L
import torch
import torch.nn.functional as F


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--devices", type=int, default=4)
    parser.add_argument("--ckpt", default="state.pkl")
    return parser.parse_args()


def main(model, train_dataset):
    args = parse_args()
    fabric = L.Fabric(accelerator="cuda", devices=args.devices, strategy="fsdp")
    fabric.launch()
    model = fabric.setup_module(model)
    optimizer = fabric.setup_optimizers(torch.optim.AdamW(model.parameters(), lr=1e-4))
    loader = fabric.setup_dataloaders(torch.utils.data.DataLoader(train_dataset, batch_size=16, shuffle=True))

    for epoch in range(args.epochs):
        for batch in loader:
            loss = F.cross_entropy(model(batch["x"]), batch["y"])
            fabric.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        state = {"model": model, "optimizer": optimizer, "epoch": epoch}
        fabric.save(args.ckpt, state)
        fabric.barrier()
