"""A trainer keeps the rank it is given; the library's users construct it (nothing in the project
does). At the end of an epoch only rank 0 syncs the metrics, which all-reduces."""
import torch
import torch.distributed as dist


class Trainer:
    def __init__(self, model: torch.nn.Module, rank: int, world_size: int):
        self.model = model
        self.rank = rank
        self.world_size = world_size
        self.losses = torch.zeros(2)

    def sync_metrics(self) -> torch.Tensor:
        dist.all_reduce(self.losses)
        return self.losses / self.world_size

    def end_epoch(self, epoch: int) -> None:
        if self.rank == 0:
            print(epoch, self.sync_metrics())  # expect: RC101
        dist.barrier()
