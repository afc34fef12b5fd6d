"""Bucket-aware batch sampler: every batch comes from a single aspect bucket."""
import random

from torch.utils.data import Sampler


class MultiAspectSampler(Sampler):
    def __init__(self, id, metadata_backend, batch_size, seed=0):
        self.id = id
        self.metadata_backend = metadata_backend
        self.batch_size = batch_size
        self.seed = seed
        self.epoch = 0

    def set_epoch(self, epoch):
        self.epoch = epoch

    def __len__(self):
        return len(self.metadata_backend)

    def __iter__(self):
        rng = random.Random(self.seed + self.epoch)
        buckets = list(self.metadata_backend.aspect_ratio_bucket_indices.items())
        rng.shuffle(buckets)
        for _, images in buckets:
            images = list(images) * (self.metadata_backend.repeats + 1)
            rng.shuffle(images)
            for start in range(0, len(images) - self.batch_size + 1, self.batch_size):
                batch = images[start : start + self.batch_size]
                self.metadata_backend.mark_batch_as_seen(batch)
                yield batch
