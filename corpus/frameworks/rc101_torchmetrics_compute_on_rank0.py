"""A plain DDP eval loop with a torchmetrics metric: compute() is called only on rank 0, but it
all-gathers the metric states from every process (sync_on_compute=True by default)."""
import torch
import torch.distributed as dist
import torchmetrics


def evaluate(model, loader, device) -> None:
    accuracy = torchmetrics.Accuracy(task="multiclass", num_classes=10).to(device)
    model.eval()
    with torch.no_grad():
        for images, labels in loader:
            preds = model(images.to(device)).argmax(dim=1)
            accuracy.update(preds, labels.to(device))
    if dist.get_rank() == 0:
        print(f"accuracy: {accuracy.compute().item():.4f}")  # expect: RC101
    accuracy.reset()
