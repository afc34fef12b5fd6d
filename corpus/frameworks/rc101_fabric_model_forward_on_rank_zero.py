"""A Fabric-wrapped (DDP strategy) model is run on rank 0 only to log a sample: the wrapped forward
is DDP's and broadcasts buffers from rank 0, and the backward of its loss all-reduces gradients."""
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
            probe_loss = model(probe).pow(2).mean()  # expect: RC101
            probe_loss.backward()  # expect: RC101
            fabric.print(f"step {step}: probe loss {probe_loss.item():.4f}")
            optimizer.zero_grad()
