from torch.nn.parallel import DistributedDataParallel as DDP

from base.base_trainer import BaseTrainer


class Trainer(BaseTrainer):
    def __init__(self, model, optimizer, criterion, config, gpu, train_loader, valid_loader):
        super().__init__(config, train_loader, valid_loader)
        self.model = DDP(model.cuda(gpu), device_ids=[gpu])
        self.optimizer = optimizer
        self.criterion = criterion

    def _train_epoch(self, epoch):
        self.model.train()
        for images, labels in self.train_loader:
            loss = self.criterion(self.model(images), labels)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
