import torch
import torch.distributed as dist

from trainer.trainer import Trainer


def main(config, model, train_loader, valid_loader, gpu):
    dist.init_process_group("nccl")
    optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"])
    trainer = Trainer(model, optimizer, torch.nn.CrossEntropyLoss(), config, gpu, train_loader, valid_loader)
    trainer.train()
