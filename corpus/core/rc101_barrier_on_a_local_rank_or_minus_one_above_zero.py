"""The look-alike of safe_barrier_on_a_local_rank_or_minus_one_at_least_zero.py that hangs: the
device id is the local rank or -1, and `> 0` holds on every local rank but the first, which never
reaches the barrier the others wait in."""
import os

import torch
import torch.distributed as dist


class Trainer:
    def __init__(self, model, device_id):
        self.model = model
        self.device_id = device_id

    def evaluate(self, checkfile):
        if self.device_id > 0:
            dist.barrier()  # expect: RC101
        self.model.load_state_dict(torch.load(checkfile))


def main():
    if "LOCAL_RANK" in os.environ:
        device_id = int(os.environ["LOCAL_RANK"])
        dist.init_process_group("nccl")
    else:
        device_id = -1
    trainer = Trainer(torch.nn.Linear(2, 2), device_id)
    trainer.evaluate("model.pt")
