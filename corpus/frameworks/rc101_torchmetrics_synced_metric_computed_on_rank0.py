"""Look-alike of safe_torchmetrics_local_metric_computed_on_rank0: built with
`sync_on_compute=True`, compute() all-gathers the states of every process, and only rank 0
calls it."""
import torch.distributed as dist
from torchmetrics import MeanMetric


def log_local_reward(rewards, step: int) -> None:
    running = MeanMetric(sync_on_compute=True)
    for reward in rewards:
        running.update(reward)
    if dist.get_rank() == 0:
        print(f"step {step}: mean reward {running.compute().item():.3f}")  # expect: RC101
