"""espnet2's ChunkIterFactory (espnet2/iterators/chunk_iter_factory.py), trimmed: reads one
utterance per input batch, cuts every sequence into chunks of a randomly chosen length with a
fixed shift ratio, caches the chunks and yields mini-batches of `batch_size` chunks. How many
mini-batches an epoch yields depends on the lengths of the utterances this rank was given."""
from collections import defaultdict
from typing import Dict, List, Sequence

import numpy as np
import torch


class ChunkIterFactory:
    def __init__(self, dataset, batch_size: int, batches: Sequence[Sequence[str]], chunk_length,
                 chunk_shift_ratio: float = 0.5, num_cache_chunks: int = 1024, seed: int = 0,
                 shuffle: bool = False, collate_fn=None):
        assert all(len(x) == 1 for x in batches), "batch-size must be 1 for chunk iterator"
        self.dataset = dataset
        self.batch_size = batch_size
        self.batches = list(batches)
        if isinstance(chunk_length, str):
            chunk_length = [int(x) for x in chunk_length.split(",")]
        self.chunk_lengths = list(chunk_length) if isinstance(chunk_length, (list, tuple)) else [chunk_length]
        self.chunk_shift_ratio = chunk_shift_ratio
        self.num_cache_chunks = max(num_cache_chunks, batch_size)
        self.seed = seed
        self.shuffle = shuffle
        self.collate_fn = collate_fn

    def build_iter(self, epoch: int, shuffle: bool = None):
        shuffle = self.shuffle if shuffle is None else shuffle
        state = np.random.RandomState(epoch + self.seed)
        order = state.permutation(len(self.batches)) if shuffle else range(len(self.batches))
        cache_chunks_dict: Dict[int, Dict[str, List]] = defaultdict(dict)
        cache_id_list_dict: Dict[int, List[str]] = defaultdict(list)
        for idx in order:
            uid = self.batches[idx][0]
            sample = self.dataset[uid]
            L = len(sample["speech_mix"])
            chunk_lengths = [lg for lg in self.chunk_lengths if lg < L]
            if len(chunk_lengths) == 0:
                # shorter than every chunk length: the utterance is its own mini-batch
                yield [uid], self.collate_fn([(uid, sample)])
                continue
            W = int(state.choice(chunk_lengths, 1))
            S = int(W * self.chunk_shift_ratio)
            # Number of chunks
            N = (L - W) // S + 1
            Z = state.randint(0, (L - W) % S + 1) if shuffle else 0
            cache_chunks = cache_chunks_dict[W]
            for k, v in sample.items():
                cache_chunks.setdefault(k, []).extend(v[Z + i * S: Z + i * S + W] for i in range(N))
            cache_id_list_dict[W].extend([uid] * N)
            if len(cache_id_list_dict[W]) > self.num_cache_chunks:
                yield from self._generate_mini_batches(cache_id_list_dict, cache_chunks_dict, W)
        for W in list(cache_id_list_dict):
            yield from self._generate_mini_batches(cache_id_list_dict, cache_chunks_dict, W, last=True)

    def _generate_mini_batches(self, id_lists, chunk_dicts, W, last=False):
        ids, chunks = id_lists[W], chunk_dicts[W]
        while len(ids) >= self.batch_size or (last and ids):
            n = min(self.batch_size, len(ids))
            batch = [(ids[i], {k: v[i] for k, v in chunks.items()}) for i in range(n)]
            yield ids[:n], self.collate_fn(batch)
            id_lists[W] = ids = ids[n:]
            chunk_dicts[W] = chunks = {k: v[n:] for k, v in chunks.items()}


def collate_chunks(batch):
    """CommonCollateFn-like: pad every key and add `<key>_lengths`; the ids travel beside."""
    keys = batch[0][1].keys()
    tensors = {k: torch.nn.utils.rnn.pad_sequence([torch.as_tensor(s[k]) for _, s in batch], True)
               for k in keys}
    tensors.update({f"{k}_lengths": torch.tensor([len(s[k]) for _, s in batch]) for k in keys})
    return tensors
