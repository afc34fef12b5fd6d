"""A Fabric training loop saves its checkpoint only on global zero; Fabric.save "must be called on
all processes" (it ends in a barrier and gathers sharded state under FSDP)."""
import lightning as L
import torch


def main(num_epochs: int = 3) -> None:
    fabric = L.Fabric(accelerator="cuda", devices=4, strategy="fsdp")
    fabric.launch()
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.Linear(256, 64))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model, optimizer = fabric.setup(model, optimizer)
    dataloader = fabric.setup_dataloaders(torch.utils.data.DataLoader(torch.randn(1024, 64), batch_size=32))
    for epoch in range(num_epochs):
        for batch in dataloader:
            loss = torch.nn.functional.mse_loss(model(batch), batch)
            fabric.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        if fabric.is_global_zero:
            state = {"model": model, "optimizer": optimizer, "epoch": epoch}
            fabric.save(f"checkpoints/epoch-{epoch}.ckpt", state)  # expect: RC101


if __name__ == "__main__":
    main()
