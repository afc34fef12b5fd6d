"""The same solver as audiocraft's: the generator that decides the adversary's steps is a fresh
`torch.Generator` seeded `1234 + epoch` on every rank at the start of each epoch and drawn once a
step, so every rank draws the same numbers and trains the adversary (an all-reduce) on the same
steps. Only draws from the process's own stream (`torch.rand(1)`) differ between ranks."""
import torch
import torch.distributed as dist


class Solver:
    def __init__(self, generator, adversary, adv_rate=0.5):
        self.generator = generator
        self.adversary = adversary
        self.adv_rate = adv_rate
        self.epoch = 0
        self.rng = None

    def train_adversary(self, fake, real):
        loss = self.adversary(fake.detach()).mean() - self.adversary(real).mean()
        loss.backward()
        for p in self.adversary.parameters():
            dist.all_reduce(p.grad)

    def run_epoch(self, loader):
        self.rng = torch.Generator()
        self.rng.manual_seed(1234 + self.epoch)
        for real in loader:
            fake = self.generator(torch.randn_like(real))
            if torch.rand(1, generator=self.rng).item() <= self.adv_rate:
                self.train_adversary(fake, real)
            fake.mean().backward()
        self.epoch += 1


def main():
    dist.init_process_group("gloo")
    solver = Solver(torch.nn.Linear(8, 8), torch.nn.Linear(8, 1))
    loader = [torch.randn(4, 8) for _ in range(10)]
    for _ in range(3):
        solver.run_epoch(loader)


if __name__ == "__main__":
    main()
