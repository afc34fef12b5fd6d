"""An examples tree: a single-process GAN script that imports nothing of the FSDP one: whether it
skips its generator on an outlier draw is its own business: `self.main` gathers nothing."""
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, ngpu: int):
        super().__init__()
        self.ngpu = ngpu
        self.main = nn.Sequential(nn.Linear(100, 784), nn.Tanh())

    def forward(self, z):
        if z.abs().max() > 4.0:
            return torch.zeros(z.size(0), 784)  # an outlier draw: a blank image
        if z.is_cuda and self.ngpu > 1:
            return nn.parallel.data_parallel(self.main, z, range(self.ngpu))
        return self.main(z)


def main(steps: int, ngpu: int):
    net = Generator(ngpu)
    for _ in range(steps):
        net(torch.randn(64, 100))
