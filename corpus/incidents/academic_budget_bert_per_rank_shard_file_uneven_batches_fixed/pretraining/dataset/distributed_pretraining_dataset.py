"""Sharded BERT pre-training data (trimmed): the training set is a directory of hdf5 shards and
every epoch each worker loads one shard file, chosen by the epoch index and the worker's rank."""
import logging
import os
import random
from concurrent.futures import ProcessPoolExecutor

import h5py
import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
from torch.utils.data.sampler import RandomSampler

logger = logging.getLogger(__name__)


class WorkerInitObj:
    def __init__(self, seed):
        self.seed = seed

    def __call__(self, worker_id):
        np.random.seed(seed=self.seed + worker_id)
        random.seed(self.seed + worker_id)


class pretraining_dataset(Dataset):
    KEYS = ["input_ids", "input_mask", "segment_ids", "masked_lm_positions", "masked_lm_ids", "next_sentence_labels"]

    def __init__(self, input_file, max_predictions_per_seq):
        self.max_predictions_per_seq = max_predictions_per_seq
        with h5py.File(input_file, "r") as f:
            self.inputs = [np.asarray(f[key][:]) for key in self.KEYS]

    def __len__(self):
        return len(self.inputs[0])

    def __getitem__(self, index):
        input_ids, input_mask, segment_ids, positions, lm_ids = [
            torch.from_numpy(inp[index].astype(np.int64)) for inp in self.inputs[:5]
        ]
        masked_lm_labels = torch.full(input_ids.shape, -1, dtype=torch.long)
        n = self.max_predictions_per_seq
        padded = torch.nonzero(positions == 0, as_tuple=False)
        if len(padded) != 0:
            n = padded[0].item()
        masked_lm_labels[positions[:n]] = lm_ids[:n]
        nsp = torch.tensor(self.inputs[5][index].astype(np.int64))
        return input_ids, input_mask, segment_ids, nsp, masked_lm_labels


def create_pretraining_dataset(input_file, max_predictions_per_seq, num_workers, train_batch_size,
                               worker_init, data_sampler, num_replicas=1, rank=0, epoch=0):
    train_data = pretraining_dataset(input_file, max_predictions_per_seq)
    sampler = data_sampler(train_data, num_replicas=num_replicas, rank=rank, drop_last=True)
    sampler.set_epoch(epoch)
    loader = DataLoader(train_data, sampler=sampler, batch_size=train_batch_size,
                        num_workers=num_workers, worker_init_fn=worker_init, pin_memory=True)
    return loader, len(train_data)


class PreTrainingDataset:
    def __init__(self, args, data_prefix="train"):
        self.max_predictions_per_seq = args.max_predictions_per_seq
        self.num_workers = args.num_workers
        self.train_micro_batch_size_per_gpu = args.train_micro_batch_size_per_gpu
        if args.local_rank == -1:
            self.global_rank, self.world_size = 0, 1
        else:
            self.global_rank, self.world_size = dist.get_rank(), dist.get_world_size()

        self.dataset_files = sorted(
            os.path.join(args.dataset_path, f)
            for f in os.listdir(args.dataset_path)
            if os.path.isfile(os.path.join(args.dataset_path, f)) and data_prefix in f
        )
        assert len(self.dataset_files) > 0, "No train/test*.hdf5 files found in given dataset path"
        random.Random(args.seed).shuffle(self.dataset_files)
        self.num_files = len(self.dataset_files)
        self.data_sampler = RandomSampler if args.local_rank == -1 else DistributedSampler
        self.worker_init = WorkerInitObj(args.seed + args.local_rank)
        self.dataset_future = None
        self.pool = ProcessPoolExecutor(1)

    def get_shard(self, epoch):
        if self.dataset_future is None:
            self.train_dataloader, sample_count = create_pretraining_dataset(
                self._get_shard_file(epoch), self.max_predictions_per_seq, self.num_workers,
                self.train_micro_batch_size_per_gpu, self.worker_init, self.data_sampler,
                num_replicas=self.world_size, rank=self.global_rank, epoch=epoch,
            )
        else:
            self.train_dataloader, sample_count = self.dataset_future.result(timeout=None)
        return self.train_dataloader, sample_count

    def prefetch_shard(self, epoch):
        self.dataset_future = self.pool.submit(
            create_pretraining_dataset, self._get_shard_file(epoch), self.max_predictions_per_seq,
            self.num_workers, self.train_micro_batch_size_per_gpu, self.worker_init, self.data_sampler,
            self.world_size, self.global_rank, epoch,
        )

    def release_shard(self, epoch):
        del self.train_dataloader

    def get_batch(self, batch_iter):
        return batch_iter

    def _get_shard_file(self, shard_index):
        # every worker opens a different shard file, and the shard files differ in size
        file_index = self._get_shard_file_index(shard_index, self.global_rank)
        return self.dataset_files[file_index % self.num_files]

    def _get_shard_file_index(self, shard_index, global_rank):
        if dist.is_initialized() and self.world_size > self.num_files:
            remainder = self.world_size % self.num_files
            file_index = (shard_index * self.world_size) + global_rank + (remainder * shard_index)
        else:
            file_index = shard_index * self.world_size + global_rank
        return file_index % self.num_files
