"""DeepSpeed data-efficiency sampler (curriculum learning): rank 0 holds the difficulty clusters,
draws the indices of each global batch from them and broadcasts the index tensor to the other
data-parallel ranks, which allocate a receive buffer of `global_batch_size` indices.

Thread: https://github.com/deepspeedai/DeepSpeed/pull/5117 ("Fix broadcast deadlock for incomplete batches in data sample for data analysis")
Project: deepspeedai/DeepSpeed
What hung: "When the batch is not a full batch (`drop_last=False`), then the size of the current
batch is smaller than the expected `self.global_batch_size` ... The `get_next_global_batch()`
method will try to broadcast the tensor of a size smaller than `self.global_batch_size` from a
master rank (`0`) ... This leads to an unexpected behaviour (deadlock, crash, or `None` tensor on
receiving ranks)" -- the broadcast's tensor "can have different sizes when comparing master with
other participant ranks".
Fix (the PR, merged): rank 0 fills an incomplete batch with `-1` up to `global_batch_size` so the
broadcast tensor has the same size everywhere, and every rank strips the `-1`s after it.
Expected rankcheck finding: RC104 on the `dist.broadcast(batch, 0, ...)` whose tensor has a
rank-0-only length on rank 0 and `global_batch_size` elsewhere.
(Inferred: the thread does not say where the short batch comes from; here it is the last global
batch of the run when `drop_last=False`, which takes only what is left of the sample budget. The
clusters are reduced to one difficulty metric read from an index file on rank 0.)
"""
import math

import numpy as np
import torch
from deepspeed import comm as dist
from deepspeed.accelerator import get_accelerator
from deepspeed.utils import logger
from torch.utils.data import DataLoader


class CurriculumDataSampler:
    def __init__(
        self,
        difficulty_path: str,
        one_epoch_total_samples: int,
        num_epochs: int,
        micro_batch_size: int,
        data_parallel_rank: int,
        data_parallel_size: int,
        data_parallel_group,
        gradient_accumulation_steps: int,
        global_rank: int,
        num_difficulty_buckets: int = 4,
        drop_last: bool = True,
        seed: int = 1234,
    ):
        self.one_epoch_total_samples = one_epoch_total_samples
        self.total_samples = one_epoch_total_samples * num_epochs
        self.micro_batch_size = micro_batch_size
        self.data_parallel_rank = data_parallel_rank
        self.data_parallel_size = data_parallel_size
        self.data_parallel_group = data_parallel_group
        self.micro_batch_times_data_parallel_size = micro_batch_size * data_parallel_size
        self.global_batch_size = self.micro_batch_times_data_parallel_size * gradient_accumulation_steps
        self.global_rank = global_rank
        self.drop_last = drop_last
        self.np_rng = np.random.default_rng(seed)
        self.consumed_samples = 0
        self.curriculum_step = 0
        self.batch = []

        self.data_clusters = []
        self.data_cluster_positions = []
        if self.global_rank == 0:
            # Only rank 0 reads the (large) difficulty index and keeps the clusters.
            difficulties = np.load(difficulty_path, mmap_mode="r")
            order = np.argsort(difficulties, kind="stable")
            for bucket in np.array_split(order, num_difficulty_buckets):
                self.data_clusters.append(self.np_rng.permutation(bucket))
                self.data_cluster_positions.append(0)

    def current_max_bucket(self) -> int:
        # Easy buckets first; one harder bucket unlocked every 1000 curriculum steps.
        return min(len(self.data_clusters), 1 + self.curriculum_step // 1000)

    def sample_from_clusters(self, num_samples: int):
        open_buckets = self.current_max_bucket()
        sizes = np.array([len(c) for c in self.data_clusters[:open_buckets]], dtype=np.float64)
        picks = self.np_rng.choice(open_buckets, num_samples, replace=True, p=sizes / sizes.sum())
        return np.bincount(picks, minlength=open_buckets)

    def get_sample_from_cluster(self, cidx: int, num_samples: int):
        start = self.data_cluster_positions[cidx]
        samples = list(self.data_clusters[cidx][start:start + num_samples])
        self.data_cluster_positions[cidx] += num_samples
        if len(samples) < num_samples:
            logger.info(f"reshuffling cluster {cidx}.")
            self.data_clusters[cidx] = self.np_rng.permutation(self.data_clusters[cidx])
            missing = num_samples - len(samples)
            samples += list(self.data_clusters[cidx][:missing])
            self.data_cluster_positions[cidx] = missing
        return samples

    def get_next_global_batch(self):
        self.curriculum_step += 1
        if self.global_rank == 0:
            num_samples = self.global_batch_size
            if not self.drop_last:
                # The last global batch of the run takes only what is left of the sample budget.
                num_samples = min(num_samples, self.total_samples - self.consumed_samples)
            batch = []
            for cidx, count in enumerate(self.sample_from_clusters(num_samples)):
                batch += self.get_sample_from_cluster(cidx, int(count))
            self.np_rng.shuffle(batch)
            batch = torch.tensor(batch, device=get_accelerator().current_device_name(), dtype=torch.long).view(-1)
        else:
            batch = torch.empty(self.global_batch_size, device=get_accelerator().current_device_name(), dtype=torch.long)
        dist.broadcast(batch, 0, group=self.data_parallel_group)  # expect: RC104
        self.batch = batch.tolist()

    def get_start_end_idx(self, batch_len: int):
        per_rank = math.ceil(batch_len / self.data_parallel_size)
        start_idx = min(self.data_parallel_rank * per_rank, batch_len)
        return start_idx, min(start_idx + per_rank, batch_len)

    def __iter__(self):
        while self.consumed_samples < self.total_samples:
            if len(self.batch) == 0:
                self.get_next_global_batch()
            current_batch = self.batch[:self.micro_batch_times_data_parallel_size]
            self.batch = self.batch[self.micro_batch_times_data_parallel_size:]
            if len(current_batch) == self.micro_batch_times_data_parallel_size or \
                    (len(current_batch) > 0 and not self.drop_last):
                start_idx, end_idx = self.get_start_end_idx(len(current_batch))
                yield current_batch[start_idx:end_idx]
                self.consumed_samples += len(current_batch)
            elif len(current_batch) == 0:
                break

    def __len__(self):
        return self.total_samples // self.micro_batch_times_data_parallel_size


def train_with_curriculum(engine, dataset, collate_fn, difficulty_path: str, num_epochs: int, drop_last: bool):
    sampler = CurriculumDataSampler(
        difficulty_path=difficulty_path,
        one_epoch_total_samples=len(dataset),
        num_epochs=num_epochs,
        micro_batch_size=engine.train_micro_batch_size_per_gpu(),
        data_parallel_rank=dist.get_rank(group=engine.data_parallel_group),
        data_parallel_size=dist.get_world_size(group=engine.data_parallel_group),
        data_parallel_group=engine.data_parallel_group,
        gradient_accumulation_steps=engine.gradient_accumulation_steps(),
        global_rank=dist.get_rank(),
        drop_last=drop_last,
    )
    loader = DataLoader(dataset, batch_sampler=sampler, collate_fn=collate_fn, num_workers=2, pin_memory=True)
    for step, batch in enumerate(loader):
        batch = {k: v.to(engine.device) for k, v in batch.items()}
        loss = engine(**batch).loss
        engine.backward(loss)
        engine.step()
        if dist.get_rank() == 0 and step % 100 == 0:
            logger.info(f"step {step}: loss {loss.item():.4f}")
