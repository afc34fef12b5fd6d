"""A metric built with `sync_on_compute=False` computes from this rank's own states: rank 0
alone may call compute() (here, to log a local running mean) and no rank waits for it."""
import torch.distributed as dist
from torchmetrics import MeanMetric


def log_local_reward(rewards, step: int) -> None:
    running = MeanMetric(sync_on_compute=False)
    for reward in rewards:
        running.update(reward)
    if dist.get_rank() == 0:
        print(f"step {step}: local mean reward {running.compute().item():.3f}")
