"""CIFAR-10 ResNet-18 trained with accelerate; after every epoch the test loop runs only under
`if accelerator.is_main_process:` and calls `accelerator.gather_for_metrics` on each batch.

Thread: https://github.com/huggingface/accelerate/issues/2785
Project: huggingface/accelerate
What hung: `gather_for_metrics` is an all-gather across processes. Only the main process entered
the evaluation block, so it waited in the first gather for processes that had already moved on to
the next epoch's training step; the script stalled at the end of epoch 1.
Fix (found by the reporter: "gather_for_metrics() isn't happy to be under
accelerator.is_main_process()"): run the evaluation loop, and its
`gather_for_metrics`, on every process; only the printing of the accuracy is main-process work.
Expected rankcheck finding: RC101 on the guarded `accelerator.gather_for_metrics` call.
"""
import torch
import torch.nn as nn
from accelerate import Accelerator
from torch import optim
from torch.utils.data import DataLoader
from torchvision import datasets, transforms
from torchvision.models import resnet18

EPOCHS = 50
GRADIENT_ACCUM_STEPS = 2
BATCH_SIZE = 128
LEARNING_RATE = 1e-3


def build_loaders():
    transform = transforms.Compose([transforms.Resize((64, 64)), transforms.ToTensor()])
    mini_batch = BATCH_SIZE // GRADIENT_ACCUM_STEPS
    trainset = datasets.CIFAR10(root=".", train=True, transform=transform, download=True)
    testset = datasets.CIFAR10(root=".", train=False, transform=transform, download=True)
    trainloader = DataLoader(trainset, batch_size=mini_batch, shuffle=True, num_workers=8, pin_memory=True)
    testloader = DataLoader(testset, batch_size=mini_batch, shuffle=False, num_workers=8, pin_memory=True)
    return trainloader, testloader


def main():
    accelerator = Accelerator(gradient_accumulation_steps=GRADIENT_ACCUM_STEPS)
    model = resnet18(num_classes=10).to(accelerator.device)
    trainloader, testloader = build_loaders()
    loss_fn = nn.CrossEntropyLoss()
    optimizer = optim.AdamW(model.parameters(), lr=LEARNING_RATE)
    model, optimizer, trainloader, testloader = accelerator.prepare(model, optimizer, trainloader, testloader)

    for epoch in range(EPOCHS):
        model.train()
        for images, targets in trainloader:
            with accelerator.accumulate(model):
                loss = loss_fn(model(images), targets)
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()

        if accelerator.is_main_process:
            model.eval()
            correct, seen = 0, 0
            with torch.no_grad():
                for images, targets in testloader:
                    preds = model(images).argmax(dim=-1)
                    preds, targets = accelerator.gather_for_metrics((preds, targets))  # expect: RC101
                    correct += (preds == targets).sum().item()
                    seen += targets.numel()
            print(f"epoch {epoch}: test accuracy {correct / seen:.4f}")


if __name__ == "__main__":
    main()
