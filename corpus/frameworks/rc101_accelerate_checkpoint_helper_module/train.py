"""The training script calls the project's save_checkpoint only on the main process; the helper
reaches Accelerator.save_state, which every process must call."""
import torch
import torchvision
from accelerate import Accelerator

from checkpointing import prune_checkpoints, save_checkpoint


def main(output_dir: str, save_every: int = 1000) -> None:
    accelerator = Accelerator()
    model = torchvision.models.resnet18(num_classes=10)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = torchvision.datasets.CIFAR10("data", train=True, download=True, transform=torchvision.transforms.ToTensor())
    dataloader = torch.utils.data.DataLoader(data, batch_size=32)
    model, optimizer, dataloader = accelerator.prepare(model, optimizer, dataloader)
    for step, (inputs, labels) in enumerate(dataloader):
        loss = torch.nn.functional.cross_entropy(model(inputs), labels)
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        if step % save_every == 0 and accelerator.is_main_process:
            save_checkpoint(accelerator, output_dir, step)  # expect: RC101
            prune_checkpoints(output_dir, keep=3)


if __name__ == "__main__":
    main("out")
