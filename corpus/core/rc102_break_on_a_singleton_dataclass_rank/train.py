"""The main process alone validates and may stop early; its `break` skips the barrier that closes
every checkpoint block, which the other processes still reach (rtg#11's shape). The rank comes
from a dataclass field's default, read through a classmethod singleton."""
import torch

from helper.distrib import Launch


def validate(model, batches) -> float:
    with torch.no_grad():
        return sum(float(model(x).mean()) for x in batches)


def train(model, optimizer, batches, val_batches, check_every: int, patience: int) -> None:
    launch = Launch.instance()
    best, bad = float("inf"), 0
    for step, x in enumerate(batches):
        loss = model(x).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if step % check_every == 0:
            if launch.is_main:
                val = validate(model, val_batches)
                bad = 0 if val < best else bad + 1
                best = min(best, val)
                if bad > patience:
                    break  # expect: RC102
            launch.barrier()
