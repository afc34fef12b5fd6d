"""BaseTrainer stores the rank in __init__ and offers gather_predictions(), which uses all_gather_object."""
import torch
import torch.distributed as dist


class BaseTrainer:
    def __init__(self, model, lr: float):
        self.rank = dist.get_rank()
        self.world_size = dist.get_world_size()
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)

    def gather_predictions(self, preds):
        chunks = [None] * self.world_size
        dist.all_gather_object(chunks, preds)
        return [p for chunk in chunks for p in chunk]

    def step(self, loss):
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
