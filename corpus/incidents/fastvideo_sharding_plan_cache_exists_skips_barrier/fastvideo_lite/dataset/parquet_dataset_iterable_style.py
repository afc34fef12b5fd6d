"""Iterable-style dataset over preprocessed VAE latents and text embeddings stored as Parquet
files; the files are sharded across sequence-parallel groups and dataloader workers with a plan
that rank 0 computes once and caches next to the data.

Thread: https://github.com/hao-ai-lab/FastVideo/pull/598 ("[bugfix] [training] fix deadlock in latent datasets and init error in multi-node training")
Project: hao-ai-lab/FastVideo (fastvideo/v1/dataset/parquet_dataset_iterable_style.py)
What hung: the PR: "Cause of hanging was actually in a different place than validation dataset
[...] In method `get_parquet_files_and_length`, before this PR, each rank was first checking for
existence of a cache, if found it will immediately return the cache's contents. If cache is not
found, then rank 0 will create a cache and then block on barrier. [...] there is actually a race
condition here where rank0 may not see a cache and then end up creating a cache and writing it to
disk before other ranks start checking for the cache. This meant that rank 0 is blocked on the
barrier while other ranks that found the cache proceeded to return before calling barrier."
Fix (the PR, merged): "rank 0 will always check for cache and create one if it does not exist. non
rank 0 will immediately block on barrier. After rank0 is done, it will call barrier and at this
point we know the cache exists [...] Then all ranks will read from cache and return contents".
Expected rankcheck finding: RC102 on the early `return` taken where this rank's
`os.path.exists(sharding_info_dir)` is true: a per-rank filesystem observation (the other ranks
look after rank 0 has written the plan), before the barrier rank 0 waits in.
(Trimmed: the BatchIterator's Parquet reading and collation, CFG dropout of text embeddings.)
"""
import os
import pickle
import random

import numpy as np
import pyarrow.parquet as pq
import torch
from torch.utils.data import IterableDataset, get_worker_info
from torchdata.stateful_dataloader import StatefulDataLoader

from fastvideo_lite.distributed import get_sp_world_size, get_world_rank, get_world_size

_PLAN_FILES = ("shard_parquet_files.pkl", "shard_total_samples.pkl", "shard_parquet_lengths.pkl")


def shard_parquet_files_across_sp_groups_and_workers(path, num_sp_groups, num_workers, seed=42):
    sharding_info_dir = os.path.join(path, f"sharding_info_{num_sp_groups}_sp_groups_{num_workers}_workers")
    if os.path.exists(sharding_info_dir):
        try:
            plan = []
            for name in _PLAN_FILES:
                with open(os.path.join(sharding_info_dir, name), "rb") as f:
                    plan.append(pickle.load(f))
            return tuple(plan)  # expect: RC102
        except Exception as e:
            print(f"Error loading sharding plan: {e}; falling back to creating a new one")

    if get_world_rank() == 0:
        parquet_files = sorted(os.path.join(root, f) for root, _, files in os.walk(path)
                               for f in files if f.endswith(".parquet"))
        if not parquet_files:
            raise ValueError(f"No parquet files found in {path}")
        lengths = [pq.ParquetFile(f).metadata.num_rows for f in parquet_files]
        order = np.argsort(lengths)[::-1]
        num_shards = num_sp_groups * num_workers
        shard_files = [[] for _ in range(num_shards)]
        shard_totals = [0] * num_shards
        shard_lengths = [{} for _ in range(num_shards)]
        for i in order:  # greedy: largest file to the currently smallest shard
            target = int(np.argmin(shard_totals))
            shard_files[target].append(parquet_files[i])
            shard_totals[target] += lengths[i]
            shard_lengths[target][parquet_files[i]] = lengths[i]
        for shard in shard_files:
            random.Random(seed).shuffle(shard)
        os.makedirs(sharding_info_dir, exist_ok=True)
        for name, obj in zip(_PLAN_FILES, (shard_files, shard_totals, shard_lengths)):
            with open(os.path.join(sharding_info_dir, name), "wb") as f:
                pickle.dump(obj, f)

    # wait for all ranks to finish
    torch.distributed.barrier()
    # recursive call: the plan now exists for every rank
    return shard_parquet_files_across_sp_groups_and_workers(path, num_sp_groups, num_workers, seed)


class LatentsParquetIterStyleDataset(IterableDataset):
    def __init__(self, path, batch_size=1, num_workers=1, seed=42):
        super().__init__()
        self.batch_size = batch_size
        self.global_rank = get_world_rank()
        self.sp_world_size = get_sp_world_size()
        self.num_sp_groups = get_world_size() // self.sp_world_size
        files, totals, _ = shard_parquet_files_across_sp_groups_and_workers(
            str(path), self.num_sp_groups, max(num_workers, 1), seed)
        self.worker_num_samples = min(totals) // batch_size * batch_size
        ith_sp_group = self.global_rank // self.sp_world_size
        self.sp_group_parquet_files = files[ith_sp_group::self.num_sp_groups]

    def __iter__(self):
        info = get_worker_info()
        worker_files = self.sp_group_parquet_files[info.id if info is not None else 0]
        yielded = 0
        for file in worker_files:
            for batch in pq.ParquetFile(file).iter_batches(batch_size=self.batch_size):
                if yielded >= self.worker_num_samples:
                    return
                rows = batch.to_pylist()
                latents = torch.stack([torch.tensor(r["vae_latent"]) for r in rows])
                embs = torch.stack([torch.tensor(r["text_embedding"]) for r in rows])
                yielded += len(rows)
                yield latents, embs


def build_parquet_iterable_style_dataloader(path, batch_size, num_data_workers, seed=42):
    dataset = LatentsParquetIterStyleDataset(path, batch_size=batch_size, num_workers=num_data_workers, seed=seed)
    loader = StatefulDataLoader(dataset, batch_size=None, num_workers=num_data_workers, pin_memory=True)
    return dataset, loader
