"""A worker object stores its own process rank in `self.rank`, and the broadcast names it as the
root: every process names itself, and each waits for its own data."""
import torch.distributed as dist


class Worker:
    def __init__(self):
        self.rank = dist.get_rank()
        self.world_size = dist.get_world_size()


def share_weights(worker: Worker, weights):
    dist.broadcast(weights, src=worker.rank)  # expect: RC104
    return weights


def main(weights):
    share_weights(Worker(), weights)
