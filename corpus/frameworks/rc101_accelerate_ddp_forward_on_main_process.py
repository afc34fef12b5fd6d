"""GAN-style sampling on the main process through the prepared (DDP-wrapped) generator: its forward
broadcasts the BatchNorm buffers from rank 0 (broadcast_buffers=True), which the other processes
never join."""
import torch
from accelerate import Accelerator
from torchvision.utils import save_image


class Generator(torch.nn.Module):
    def __init__(self, latent_dim: int = 64) -> None:
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(latent_dim, 256), torch.nn.BatchNorm1d(256), torch.nn.ReLU(),
            torch.nn.Linear(256, 28 * 28), torch.nn.Tanh(),
        )

    def forward(self, z):
        return self.net(z).view(-1, 1, 28, 28)


def train(dataloader, epochs: int) -> None:
    accelerator = Accelerator()
    generator = Generator()
    optimizer = torch.optim.Adam(generator.parameters(), lr=2e-4)
    generator, optimizer, dataloader = accelerator.prepare(generator, optimizer, dataloader)
    fixed_noise = torch.randn(64, 64, device=accelerator.device)
    for epoch in range(epochs):
        for real, _ in dataloader:
            fake = generator(torch.randn(real.size(0), 64, device=accelerator.device))
            loss = fake.mean()
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        if accelerator.is_main_process:
            with torch.no_grad():
                samples = generator(fixed_noise)  # expect: RC101
            save_image(samples, f"samples_{epoch}.png", normalize=True)
