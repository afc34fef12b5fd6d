"""Fabric training loop (FSDP strategy) that writes its checkpoint only from global rank 0.

Thread: https://github.com/Lightning-AI/pytorch-lightning/issues/19780 ("Does `fabric.save()` save on rank 0?")
Project: Lightning-AI/pytorch-lightning (Fabric)
What hung: `fabric.save` is collective for sharded strategies (FSDP gathers or writes shards from
every rank and synchronizes them); called under `if fabric.global_rank == 0:` it waited for ranks
that never called it.
Fix (maintainer, awaelchli): "The use of `if fabric.global_rank == 0: fabric.save(...)` is not
correct. Can you please remove `if fabric.global_rank == 0`. Fabric already makes sure to save
correctly on the rank that should save." -- "Thanks @awaelchli, it worked!"
Expected rankcheck finding: RC101 on the guarded `fabric.save(...)`.
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
        if fabric.global_rank == 0:
            fabric.save(args.ckpt, state)  # expect: RC101
        fabric.barrier()
