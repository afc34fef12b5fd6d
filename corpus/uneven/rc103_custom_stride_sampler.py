"""A hand-written Sampler yields `indices[self.rank::self.num_replicas]` without padding; with 1003 samples on 4 ranks the DataLoaders have different lengths and DDP's backward all_reduce hangs on the last step."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Sampler, TensorDataset


class StrideSampler(Sampler):
    def __init__(self, dataset_len: int, rank: int, num_replicas: int, seed: int = 0):
        self.dataset_len = dataset_len
        self.rank = rank
        self.num_replicas = num_replicas
        self.seed = seed

    def __iter__(self):
        g = torch.Generator().manual_seed(self.seed)
        indices = torch.randperm(self.dataset_len, generator=g).tolist()
        yield from indices[self.rank::self.num_replicas]

    def __len__(self):
        return len(range(self.rank, self.dataset_len, self.num_replicas))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--num-samples", type=int, default=1003)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    ds = TensorDataset(torch.randn(args.num_samples, 20), torch.randint(0, 3, (args.num_samples,)))
    sampler = StrideSampler(len(ds), dist.get_rank(), dist.get_world_size())
    loader = DataLoader(ds, batch_size=1, sampler=sampler)
    model = DDP(nn.Linear(20, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for x, y in loader:  # expect: RC103
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
