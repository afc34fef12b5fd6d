"""A look-alike that yields, per step, the samples of this rank's batch that pass a filter: what it
yields has as many items as this rank kept, so the consumer's per-item all-reduce runs a per-rank
number of times."""
import torch.distributed as dist


class Filtered:
    def __init__(self, loader, min_area):
        self.dataset = loader
        self.min_area = min_area

    def __iter__(self):
        for batch in self.dataset:
            kept = []
            for d in batch:
                if d["width"] * d["height"] >= self.min_area:
                    kept.append(d)
            yield kept


def train(filtered: Filtered):
    for batch in filtered:
        for sample in batch:  # expect: RC103
            dist.all_reduce(sample["loss"])
