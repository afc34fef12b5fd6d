"""The look-alike: the same singleton, but the early stop tests the world size (a field every
process reads alike from the launcher), so every process breaks or none does."""
import torch

from helper.distrib import Launch


def validate(model, batches) -> float:
    with torch.no_grad():
        return sum(float(model(x).mean()) for x in batches)


def train(model, optimizer, batches, val_batches, check_every: int, max_world: int) -> None:
    launch = Launch.instance()
    for step, x in enumerate(batches):
        loss = model(x).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if step % check_every == 0:
            if launch.world_size > max_world:
                break
            launch.barrier()
