"""A logging helper decorated with @accelerator.on_main_process reduces the loss inside: only the
main process runs the function, so it waits alone in Accelerator.reduce."""
import torch
from accelerate import Accelerator

accelerator = Accelerator(log_with="tensorboard", project_dir="runs")


@accelerator.on_main_process
def log_epoch(epoch: int, epoch_loss: torch.Tensor) -> None:  # expect: RC107
    mean_loss = accelerator.reduce(epoch_loss, reduction="mean")
    accelerator.log({"train/loss": mean_loss.item()}, step=epoch)
    print(f"epoch {epoch}: {mean_loss.item():.4f}")


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
        log_epoch(epoch, epoch_loss)
