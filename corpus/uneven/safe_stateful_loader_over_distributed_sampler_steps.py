"""An SFT trainer (verl's shape) shards its data with a DistributedSampler built with the
data-parallel rank of a device mesh, wraps it in torchdata's StatefulDataLoader and sets its
step counts from len() of that loader: the sampler pads every rank's share to one length, so
every rank validates and saves on the same steps."""
import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.utils.data import DistributedSampler
from torchdata.stateful_dataloader import StatefulDataLoader


class SFTTrainer:
    def __init__(self, config, model, train_dataset):
        self.config = config
        self.model = model
        self.device_mesh = init_device_mesh("cpu", mesh_shape=(dist.get_world_size(),), mesh_dim_names=("dp",))
        self._build_dataloader(train_dataset)
        self.steps_per_epoch = len(self.train_dataloader)
        self.total_steps = self.steps_per_epoch * config.total_epochs

    def _build_dataloader(self, train_dataset):
        rank = self.device_mesh.get_local_rank("dp")
        world_size = self.device_mesh.size(0)
        self.train_sampler = DistributedSampler(train_dataset, shuffle=True, num_replicas=world_size, rank=rank, drop_last=True)
        self.train_dataloader = StatefulDataLoader(train_dataset, batch_size=self.config.batch_size, sampler=self.train_sampler, drop_last=True)

    def validation_step(self):
        loss = torch.zeros(1)
        dist.all_reduce(loss)
        return loss

    def fit(self, start_step):
        global_step = start_step
        start_epoch = global_step // self.steps_per_epoch
        for epoch in range(start_epoch, self.config.total_epochs):
            self.train_sampler.set_epoch(epoch)
            for batch in self.train_dataloader:
                global_step += 1
                loss = self.model(batch).sum()
                loss.backward()
                dist.all_reduce(loss)
                is_last_step = global_step >= self.total_steps
                if is_last_step or global_step % self.config.test_freq == 0:
                    self.validation_step()
                if is_last_step:
                    return
