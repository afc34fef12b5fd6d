"""monitored_barrier on the default group of an NCCL job, on a side group that inherits NCCL, and
on the default group of a job created without a backend ("undefined"): torch raises on each."""
from datetime import timedelta

import torch.distributed as dist

BACKEND = "nccl"


class Trainer:
    def __init__(self):
        self.side = dist.new_group(ranks=[0, 1], timeout=timedelta(minutes=2))

    def sync(self):
        dist.monitored_barrier(group=self.side, timeout=timedelta(seconds=30))  # expect: RC202


def main():
    dist.init_process_group(BACKEND, timeout=timedelta(minutes=5))
    trainer = Trainer()
    dist.monitored_barrier(timeout=timedelta(seconds=30))  # expect: RC202
    trainer.sync()
