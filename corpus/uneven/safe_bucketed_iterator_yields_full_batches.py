"""detectron2's AspectRatioGroupedDataset shape: an iterator that groups this rank's samples into
buckets and yields a bucket when it holds exactly `batch_size` of them. How many samples went into
each bucket depends on the data, but what it yields always has `batch_size` items: the consumer's
per-item all-reduce runs as often on every rank."""
import torch.distributed as dist


class AspectRatioGrouped:
    def __init__(self, loader, batch_size):
        self.dataset = loader
        self.batch_size = batch_size
        self.buckets = [[], []]

    def __iter__(self):
        for d in self.dataset:
            bucket = self.buckets[0 if d["width"] > d["height"] else 1]
            bucket.append(d)
            if len(bucket) == self.batch_size:
                yield bucket[:]
                del bucket[:]


def train(grouped: AspectRatioGrouped):
    for batch in grouped:
        for sample in batch:
            dist.all_reduce(sample["loss"])
