"""The fix: every rank runs every batch (setup_dataloaders gives each rank an equal share through a
DistributedSampler), so the all_reduce calls line up."""
import lightning as L
import torch


def validate(fabric: L.Fabric, model, val_loader) -> float:
    model.eval()
    total = torch.zeros((), device=fabric.device)
    for x, y in val_loader:
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
