"""Safe twin of fastvideo_sharding_plan_cache_exists_skips_barrier: as in the merged fix of
FastVideo#598, only rank 0 looks for the cached sharding plan and writes it when missing; every rank
then meets at the barrier and only afterwards reads the plan, so no rank can return before it.

Thread: https://github.com/hao-ai-lab/FastVideo/pull/598
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


def _write_sharding_plan(path, sharding_info_dir, num_sp_groups, num_workers, seed):
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


def shard_parquet_files_across_sp_groups_and_workers(path, num_sp_groups, num_workers, seed=42):
    sharding_info_dir = os.path.join(path, f"sharding_info_{num_sp_groups}_sp_groups_{num_workers}_workers")
    # only rank 0 decides whether the plan exists, and creates it if not
    if get_world_rank() == 0 and not os.path.exists(sharding_info_dir):
        _write_sharding_plan(path, sharding_info_dir, num_sp_groups, num_workers, seed)

    # every rank waits here; afterwards the plan exists for all of them
    torch.distributed.barrier()
    plan = []
    for name in _PLAN_FILES:
        with open(os.path.join(sharding_info_dir, name), "rb") as f:
            plan.append(pickle.load(f))
    return tuple(plan)


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
