"""The same trainer shards its files by hand (`files[rank::world_size]`) and gives each rank a
StatefulDataLoader over its own share: len() of the loader is that share's, so the step counts,
and the validation taken on the last step, differ between ranks."""
import torch
import torch.distributed as dist
from torchdata.stateful_dataloader import StatefulDataLoader


class SFTTrainer:
    def __init__(self, config, model, files):
        self.config = config
        self.model = model
        rank = dist.get_rank()
        world_size = dist.get_world_size()
        self.train_dataloader = StatefulDataLoader(files[rank::world_size], batch_size=config.batch_size)
        self.steps_per_epoch = len(self.train_dataloader)

    def validation_step(self):
        loss = torch.zeros(1)
        dist.all_reduce(loss)
        return loss

    def fit(self):
        for step, batch in enumerate(self.train_dataloader):  # expect: RC103
            loss = self.model(batch).sum()
            loss.backward()
            if step == self.steps_per_epoch - 1:
                self.validation_step()  # expect: RC101
