"""An item picked by a per-rank draw is shaped like every other item: diffusers' Huber-loss scripts
draw one timestep per rank, read `alphas_cumprod[timestep]` from the noise schedule and scale the
loss by it; the loss they gather is still a scalar repeated to the batch size on every rank. What
the rank picks a row with changes the row's shape only in a list of differently sized items, which
a rank's own pick is written for (`parts[rank]`).

The look-alikes mask with a test kept in a variable: a mask keeps as many elements as its values
say, so the gathered length is this rank's own."""
import math

import torch
import torch.distributed as dist


def huber_step(model, batch, noise_scheduler, train_batch_size):
    timesteps = torch.randint(0, 1000, (1,), device="cpu")
    timestep = timesteps.item()
    alphas_cumprod = noise_scheduler.alphas_cumprod[timestep]
    sigmas = ((1.0 - alphas_cumprod) / alphas_cumprod) ** 0.5
    huber_c = (1 - 0.1) / (1 + sigmas) ** 2 + 0.1
    pred = model(batch)
    loss = 2 * huber_c * (torch.sqrt((pred - batch) ** 2 + huber_c**2) - huber_c)
    loss = torch.mean(loss)
    gathered = [torch.empty(train_batch_size) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, loss.repeat(train_batch_size))
    scale = noise_scheduler.sigmas[math.floor(timestep / 2)]
    dist.all_reduce(scale)


def masked_accuracy(logits, batch):
    labels = batch["labels"]
    correct = logits.argmax(-1) == labels
    out = [torch.empty(0) for _ in range(dist.get_world_size())]
    dist.all_gather(out, logits[correct])  # expect: RC104
    keep = batch["valid"].bool()
    dist.all_gather(out, labels[keep])  # expect: RC104
