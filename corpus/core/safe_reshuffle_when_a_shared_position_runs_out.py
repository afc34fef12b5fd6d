"""The look-alike of rc101_reshuffle_when_a_rank_offset_position_runs_out.py, fixed as
gradient-garden fixed it: the position is the global batch's, the same on every rank, and each
rank slices its own part at `position + B*T*rank`; every rank runs out of a shard on the same step
and reshuffles together.
"""
import random

import torch
import torch.distributed as dist


class ShardLoader:
    def __init__(self, shards, batch_size, seq_len, rank, world):
        self.shards = list(shards)
        self.B, self.T = batch_size, seq_len
        self.rank, self.world = rank, world
        self.shard = 0
        self.tokens = torch.load(self.shards[0])
        self.position = 0

    def reshuffle(self):
        order = list(range(len(self.shards)))
        if self.rank == 0:
            random.shuffle(order)
        holder = [order]
        dist.broadcast_object_list(holder, src=0)
        self.shards = [self.shards[i] for i in holder[0]]

    def next_batch(self):
        B, T = self.B, self.T
        start = self.position + B * T * self.rank
        buf = self.tokens[start : start + B * T + 1]
        self.position += B * T * self.world
        if self.position + B * T * self.world + 1 > len(self.tokens):
            self.shard = (self.shard + 1) % len(self.shards)
            self.reshuffle()
            self.tokens = torch.load(self.shards[self.shard])
            self.position = 0
        return buf[:-1].view(B, T), buf[1:].view(B, T)
