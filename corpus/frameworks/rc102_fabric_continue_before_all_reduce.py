"""Validation in a Fabric loop: non-zero ranks `continue` past the batch, but the loss is averaged
with Fabric.all_reduce further down, which rank 0 then enters alone."""
import lightning as L
import torch


def validate(fabric: L.Fabric, model, val_loader) -> float:
    model.eval()
    total = torch.zeros((), device=fabric.device)
    for batch_idx, (x, y) in enumerate(val_loader):
        if fabric.global_rank != 0 and batch_idx >= 10:
            continue  # expect: RC102
        with torch.no_grad():
            loss = torch.nn.functional.cross_entropy(model.module(x), y)
        total += fabric.all_reduce(loss, reduce_op="mean")
    return total.item()


def main() -> None:
    fabric = L.Fabric(devices=2, strategy="ddp")
    fabric.launch()
    model = fabric.setup(torch.nn.Linear(16, 4))
    val_loader = fabric.setup_dataloaders(torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.randn(256, 16), torch.randint(0, 4, (256,))), batch_size=8))
    fabric.print(validate(fabric, model, val_loader))
