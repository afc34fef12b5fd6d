"""Trimmed bigdl/orca/learn/pytorch/utils.py: per-epoch metric meters, averaged over the workers
with one all_reduce per metric when `sync_stats` is on."""
import collections

import torch

NUM_SAMPLES = "num_samples"
BATCH_COUNT = "batch_count"


class AverageMeter:
    def __init__(self):
        self.val = 0.0
        self.sum = 0.0
        self.count = 0
        self.avg = 0.0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class AverageMeterCollection:
    def __init__(self):
        self._batch_count = 0
        self.n = 0
        self._meters = collections.defaultdict(AverageMeter)

    def update(self, metrics, n=1):
        self._batch_count += 1
        self.n += n
        for name, value in metrics.items():
            self._meters[name].update(value, n=n)

    def summary(self, sync_stats=False, dist_backend=None):
        stats = {BATCH_COUNT: self._batch_count, NUM_SAMPLES: self.n}
        for name, meter in sorted(self._meters.items()):
            if sync_stats:
                world_size = dist_backend.get_world_size()
                avg = torch.tensor(meter.avg)
                dist_backend.all_reduce(avg)
                last = torch.tensor(meter.val)
                dist_backend.all_reduce(last)
                stats[name] = avg.item() / world_size
                stats["last_" + name] = last.item() / world_size
            else:
                stats[name] = meter.avg
                stats["last_" + name] = meter.val
        return stats


class TorchDistBackend:
    def get_world_size(self):
        import torch.distributed as dist
        return dist.get_world_size()

    def all_reduce(self, *args, **kwargs):
        import torch.distributed as dist
        return dist.all_reduce(*args, **kwargs)
