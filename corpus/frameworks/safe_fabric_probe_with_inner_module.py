"""The fix: probe through the inner module (model.module) under no_grad: local, no collective."""
import lightning as L
import torch


def main(steps: int = 100) -> None:
    fabric = L.Fabric(devices=2, strategy="ddp")
    fabric.launch()
    model = torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.BatchNorm1d(32), torch.nn.Linear(32, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    model, optimizer = fabric.setup(model, optimizer)
    probe = torch.randn(8, 32, device=fabric.device)
    for step in range(steps):
        x = torch.randn(16, 32, device=fabric.device)
        loss = model(x).pow(2).mean()
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        if fabric.global_rank == 0 and step % 10 == 0:
            with torch.no_grad():
                probe_loss = model.module(probe).pow(2).mean()
            fabric.print(f"step {step}: probe loss {probe_loss.item():.4f}")
