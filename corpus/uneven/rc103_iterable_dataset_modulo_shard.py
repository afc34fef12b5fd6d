"""An IterableDataset that shards a text file by line number modulo the world size: with N lines,
ranks below N % world_size get one more sample, so they run one more step and wait in its gradient
all-reduce alone. The look-alikes skip blank lines and every other line, the same on every rank."""
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, IterableDataset


class ShardedLines(IterableDataset):
    def __init__(self, path, rank, world_size):
        self.path = path
        self.rank = rank
        self.world_size = world_size

    def __iter__(self):
        with open(self.path) as f:
            for i, line in enumerate(f):
                if i % self.world_size != self.rank:
                    continue
                yield line


class EveryOtherLine(IterableDataset):
    def __init__(self, path):
        self.path = path

    def __iter__(self):
        with open(self.path) as f:
            for i, line in enumerate(f):
                if i % 2:
                    continue
                if not line.strip():
                    continue
                yield line


def train(build_model, path):
    dist.init_process_group("gloo")
    model = DDP(build_model())
    for batch in DataLoader(ShardedLines(path, dist.get_rank(), dist.get_world_size())):  # expect: RC103
        model(batch).sum().backward()


def train_on_the_same_lines(build_model, path):
    model = DDP(build_model())
    for batch in DataLoader(EveryOtherLine(path)):
        model(batch).sum().backward()
