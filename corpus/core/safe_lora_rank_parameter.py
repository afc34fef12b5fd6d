"""The look-alike: `rank` here is a low-rank adapter's rank, not a process's. Adapters above rank
8 are merged, and the merge all-reduces the adapter weights on every rank; which rank the
process is has nothing to do with it."""
import torch
import torch.distributed as dist


class LoraLinear(torch.nn.Module):
    def __init__(self, base: torch.nn.Linear, rank: int, alpha: float = 16.0):
        super().__init__()
        self.base = base
        self.rank = rank
        self.down = torch.nn.Parameter(torch.zeros(rank, base.in_features))
        self.up = torch.nn.Parameter(torch.zeros(base.out_features, rank))
        self.scale = alpha / rank

    def merge(self) -> None:
        if self.rank > 8:
            delta = (self.up @ self.down) * self.scale
            dist.all_reduce(delta)
            self.base.weight.data += delta / dist.get_world_size()


def merge_adapters(model: torch.nn.Module, lora_rank: int) -> None:
    for module in model.modules():
        if isinstance(module, LoraLinear) and lora_rank > 8:
            module.merge()
