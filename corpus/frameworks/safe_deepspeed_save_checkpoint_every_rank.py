"""The fix from the DeepSpeed docs: every process calls save_checkpoint with the same tag."""
import argparse

import deepspeed
import torch
import torchvision
import torchvision.transforms as transforms


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)
    parser.add_argument("--save_dir", default="checkpoints")
    parser = deepspeed.add_config_arguments(parser)
    cmd_args = parser.parse_args()

    net = torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10))
    model_engine, optimizer, trainloader, _ = deepspeed.initialize(
        args=cmd_args, model=net, model_parameters=net.parameters(),
        training_data=torchvision.datasets.MNIST("data", train=True, download=True, transform=transforms.ToTensor()),
    )
    for step, (inputs, labels) in enumerate(trainloader):
        outputs = model_engine(inputs.flatten(1).to(model_engine.local_rank))
        loss = torch.nn.functional.cross_entropy(outputs, labels.to(model_engine.local_rank))
        model_engine.backward(loss)
        model_engine.step()
        if step % 1000 == 0:
            model_engine.save_checkpoint(cmd_args.save_dir, tag=f"step{step}", client_state={"step": step})
            if model_engine.global_rank == 0:
                print(f"checkpoint step{step} written")


if __name__ == "__main__":
    main()
