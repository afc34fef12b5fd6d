"""GAN-style solver: the adversary is trained on a random fraction of the steps, decided by a draw
from a `torch.Generator` each rank seeds with its own rank (`seed + rank`, copied from the data
augmentation's stream). Training the adversary all-reduces its gradients, so on a step where rank 0
draws below the rate and rank 1 does not, rank 0 waits in that all-reduce alone."""
import argparse

import torch
import torch.distributed as dist


def train_adversary(adversary, fake, real):
    loss = adversary(fake.detach()).mean() - adversary(real).mean()
    loss.backward()
    for p in adversary.parameters():
        dist.all_reduce(p.grad)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--adv-rate", type=float, default=0.5)
    args = parser.parse_args()
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    generator = torch.nn.Linear(8, 8)
    adversary = torch.nn.Linear(8, 1)
    rng = torch.Generator().manual_seed(args.seed + rank)
    for _ in range(100):
        real = torch.randn(4, 8)
        fake = generator(torch.randn(4, 8))
        if torch.rand(1, generator=rng).item() < args.adv_rate:
            train_adversary(adversary, fake, real)  # expect: RC101
        fake.mean().backward()


if __name__ == "__main__":
    main()
