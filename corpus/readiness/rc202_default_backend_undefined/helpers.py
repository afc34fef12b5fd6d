from datetime import timedelta

import torch.distributed as dist


def wait_for_everyone():
    dist.monitored_barrier(timeout=timedelta(seconds=30), wait_all_ranks=True)  # expect: RC202
