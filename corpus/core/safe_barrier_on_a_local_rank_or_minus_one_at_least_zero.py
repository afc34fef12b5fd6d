"""PELICAN's device id: the local rank when a launcher set LOCAL_RANK, else -1 (one process, no
group). `if self.device_id >= 0: barrier()` asks whether the job is distributed: every rank of a
distributed job has a local rank of 0 or more, so all of them wait there. The look-alike that
tests `> 0` (every local rank but the first) is in
rc101_barrier_on_a_local_rank_or_minus_one_above_zero.py."""
import os

import torch
import torch.distributed as dist


class Trainer:
    def __init__(self, model, device_id):
        self.model = model
        self.device_id = device_id

    def evaluate(self, checkfile):
        if self.device_id >= 0:
            dist.barrier()  # the main process has finished writing the checkpoint
        self.model.load_state_dict(torch.load(checkfile))


def main():
    if "LOCAL_RANK" in os.environ:
        device_id = int(os.environ["LOCAL_RANK"])
        dist.init_process_group("nccl")
    else:
        device_id = -1
    trainer = Trainer(torch.nn.Linear(2, 2), device_id)
    trainer.evaluate("model.pt")
