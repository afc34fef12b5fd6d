"""Rank 0 leaves a flag file when it decides to stop and every rank breaks out of the training
loop when it sees the file; without a barrier between the write and the test, a rank that looks
before the file is there trains on and waits in the next step's all-reduce (RTG's early stop
before its fix put the barrier first)."""
from pathlib import Path

import torch.distributed as dist


def train(model_dir, batches, should_stop):
    flag = Path(model_dir) / "_EARLY_STOPPED"
    for batch in batches:
        loss = batch.sum()
        dist.all_reduce(loss)
        if dist.get_rank() == 0 and should_stop(loss):
            flag.touch()
        if flag.exists():
            break  # expect: RC103
