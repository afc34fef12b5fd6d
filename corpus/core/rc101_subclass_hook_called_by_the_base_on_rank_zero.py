"""A trainer base class runs its hooks the template-method way; the project's subclass overrides
the logging hook with one that all-reduces its metric. The base calls that hook on rank 0 only,
so the subclass's all-reduce is reached by rank 0 alone: the base's own `on_log` does nothing,
the override is what runs."""
import torch
import torch.distributed as dist


class Trainer:
    def fit(self, loader):
        for batch in loader:
            self.training_step(batch)
            if dist.get_rank() == 0:
                self.on_log()  # expect: RC101

    def training_step(self, batch):
        raise NotImplementedError

    def on_log(self):
        pass


class ClassifierTrainer(Trainer):
    def __init__(self, model: torch.nn.Module):
        self.model = model
        self.loss_sum = torch.zeros(1)

    def training_step(self, batch):
        loss = self.model(batch).mean()
        loss.backward()
        self.loss_sum += loss.detach()

    def on_log(self):
        total = self.loss_sum.clone()
        dist.all_reduce(total)
        print("mean loss", total.item() / dist.get_world_size())
