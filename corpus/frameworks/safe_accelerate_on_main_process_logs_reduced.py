"""The fix: every process reduces; the @accelerator.on_main_process function only logs a number."""
import torch
from accelerate import Accelerator

accelerator = Accelerator(log_with="tensorboard", project_dir="runs")


@accelerator.on_main_process
def log_epoch(epoch: int, mean_loss: float) -> None:
    accelerator.log({"train/loss": mean_loss}, step=epoch)
    print(f"epoch {epoch}: {mean_loss:.4f}")


def train(model, optimizer, dataloader, epochs: int) -> None:
    model, optimizer, dataloader = accelerator.prepare(model, optimizer, dataloader)
    for epoch in range(epochs):
        epoch_loss = torch.zeros((), device=accelerator.device)
        for inputs, targets in dataloader:
            loss = torch.nn.functional.cross_entropy(model(inputs), targets)
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
            epoch_loss += loss.detach()
        mean_loss = accelerator.reduce(epoch_loss, reduction="mean")
        log_epoch(epoch, mean_loss.item())
