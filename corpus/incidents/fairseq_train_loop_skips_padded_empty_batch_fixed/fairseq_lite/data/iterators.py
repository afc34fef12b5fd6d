"""Trimmed fairseq/data/iterators.py (2019): the epoch iterator deals the batches round-robin to the
workers and pads the shorter shards with an empty batch (`fill_value=[]`), so that every worker
iterates the same number of times; GroupedIterator chunks them by `--update-freq`."""
import itertools
import math

import numpy as np
import torch


class CountingIterator:
    def __init__(self, iterable, start=0):
        self.iterable = iterable
        self.count = start
        self.itr = iter(self)
        self.len = start + len(iterable)

    def __len__(self):
        return self.len

    def __iter__(self):
        for x in self.iterable:
            self.count += 1
            yield x

    def __next__(self):
        return next(self.itr)


class GroupedIterator:
    def __init__(self, iterable, chunk_size):
        self._len = int(math.ceil(len(iterable) / float(chunk_size)))
        self.itr = iterable
        self.chunk_size = chunk_size

    def __len__(self):
        return self._len

    def __iter__(self):
        return self

    def __next__(self):
        chunk = []
        try:
            for _ in range(self.chunk_size):
                chunk.append(next(self.itr))
        except StopIteration as e:
            if len(chunk) == 0:
                raise e
        return chunk


class ShardedIterator:
    def __init__(self, iterable, num_shards, shard_id, fill_value=None):
        self._sharded_len = len(iterable) // num_shards
        if len(iterable) % num_shards > 0:
            self._sharded_len += 1
        self.itr = itertools.zip_longest(
            range(self._sharded_len),
            itertools.islice(iterable, shard_id, len(iterable), num_shards),
            fillvalue=fill_value,
        )

    def __len__(self):
        return self._sharded_len

    def __iter__(self):
        return self

    def __next__(self):
        return next(self.itr)[1]


class EpochBatchIterator:
    def __init__(self, dataset, collate_fn, batch_sampler, seed=1, num_shards=1, shard_id=0):
        self.dataset = dataset
        self.collate_fn = collate_fn
        self.frozen_batches = tuple(batch_sampler)
        self.seed = seed
        self.num_shards = num_shards
        self.shard_id = shard_id
        self.epoch = 0
        self.iterations_in_epoch = 0

    def next_epoch_itr(self, shuffle=True):
        self.epoch += 1
        batches = list(self.frozen_batches)
        if shuffle:
            np.random.RandomState(self.seed + self.epoch).shuffle(batches)
        shard = ShardedIterator(batches, self.num_shards, self.shard_id, fill_value=[])
        loader = torch.utils.data.DataLoader(self.dataset, collate_fn=self.collate_fn, batch_sampler=shard)
        return CountingIterator(loader)

    def end_of_epoch(self):
        return True
