"""Token-shard loader of the pretraining stage: every rank walks the same sequence of `.npy` token
shards and takes its own B*S slice of each global batch; at the end of the shard list the order of
the shards is reshuffled on rank 0 and broadcast to the others."""
import os
import random
import re

import numpy as np
import torch
import torch.distributed as dist

from logger import logger


def load_tokens(filename):
    npt = np.load(filename, allow_pickle=False)
    if npt.dtype != np.int64:
        npt = npt.astype(np.int64)
    return torch.from_numpy(npt)


class PretrainingDataLoader:
    def __init__(self, batch_size, sequence_length, is_master_process, ddp_rank, ddp_world_size, data_root, split,
                 use_shuffle=False):
        self.B = batch_size
        self.S = sequence_length
        self.is_master_process = is_master_process
        self.ddp_rank = ddp_rank
        self.ddp_world_size = ddp_world_size
        assert split in {"train", "val"}
        self.split = split
        self.use_shuffle = use_shuffle
        self.total_tokens = None

        split_root = os.path.join(data_root, split)
        assert os.path.isdir(split_root), f"missing split dir: {split_root}"
        pattern = re.compile(r"^data_(\d+)\.npy$")
        found = []
        for name in os.listdir(split_root):
            match = pattern.match(name)
            if match:
                found.append((int(match.group(1)), os.path.join(split_root, name)))
        found.sort(key=lambda x: x[0])
        assert [i for i, _ in found] == list(range(len(found))), "shard sequence is broken"
        self.shards = [path for _, path in found]
        assert self.shards, f"no shards found in split {split}"
        if is_master_process:
            logger.info(f"found {len(self.shards)} shards for split {split}")
        self.reset()

    def calculate_max_tokens(self):
        if self.total_tokens:
            return self.total_tokens

        def _count():
            total = 0
            for path in self.shards:
                shard = np.load(path, mmap_mode="r", allow_pickle=False)
                total += int(shard.shape[0])
                del shard
            return total

        if self.ddp_world_size <= 1 or not dist.is_initialized():
            return _count()
        holder = [_count() if self.is_master_process else None]
        dist.broadcast_object_list(holder, src=0)
        self.total_tokens = int(holder[0])
        return self.total_tokens

    def sync_shuffle_shards(self):
        if not self.use_shuffle:
            return
        if self.ddp_world_size <= 1 or not dist.is_initialized():
            random.shuffle(self.shards)
            return
        order = list(range(len(self.shards)))
        if self.is_master_process:
            random.shuffle(order)
        holder = [order]
        dist.broadcast_object_list(holder, src=0)
        self.shards = [self.shards[i] for i in holder[0]]

    def reset(self):
        self.current_shard = 0
        self.sync_shuffle_shards()
        self.tokens = load_tokens(self.shards[self.current_shard])
        if torch.cuda.is_available():
            self.tokens = self.tokens.pin_memory()
        self.current_position = self.B * self.S * self.ddp_rank

    def state_dict(self):
        return {"shards": list(self.shards), "current_shard": self.current_shard,
                "current_position": self.current_position}

    def load_state_dict(self, state):
        self.shards = state["shards"]
        self.current_shard = state["current_shard"]
        self.tokens = load_tokens(self.shards[self.current_shard])
        if torch.cuda.is_available():
            self.tokens = self.tokens.pin_memory()
        self.current_position = state["current_position"]

    def next_batch(self):
        B, S = self.B, self.S
        buf = self.tokens[self.current_position : self.current_position + B * S + 1]
        x = buf[:-1].view(B, S)
        y = buf[1:].view(B, S)
        self.current_position += B * S * self.ddp_world_size
        if self.current_position + (B * S * self.ddp_world_size + 1) > len(self.tokens):
            self.current_shard = (self.current_shard + 1) % len(self.shards)
            if self.current_shard == 0:
                self.sync_shuffle_shards()  # expect: RC101
            self.tokens = load_tokens(self.shards[self.current_shard])
            if torch.cuda.is_available():
                self.tokens = self.tokens.pin_memory()
            self.current_position = self.B * self.S * self.ddp_rank
        return x, y
