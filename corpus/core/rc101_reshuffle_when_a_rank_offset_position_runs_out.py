"""A token-shard loader in the nanoGPT style: each rank starts reading at `B*T*rank` and advances
by a whole global batch, `self.position += B*T*world`, and when its next slice would run past the
shard it moves to the next one and, on wrapping, reshuffles the shard order with a broadcast. The
position is offset by the rank, so the ranks run out of a shard on different steps and the
broadcast is issued by some ranks only (gradient-garden#20). Look-alike:
safe_reshuffle_when_a_shared_position_runs_out.py.
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
        self.position = self.B * self.T * self.rank

    def reshuffle(self):
        order = list(range(len(self.shards)))
        if self.rank == 0:
            random.shuffle(order)
        holder = [order]
        dist.broadcast_object_list(holder, src=0)
        self.shards = [self.shards[i] for i in holder[0]]

    def next_batch(self):
        B, T = self.B, self.T
        buf = self.tokens[self.position : self.position + B * T + 1]
        self.position += B * T * self.world
        if self.position + B * T * self.world + 1 > len(self.tokens):
            self.shard = (self.shard + 1) % len(self.shards)
            self.reshuffle()  # expect: RC101
            self.tokens = torch.load(self.shards[self.shard])
            self.position = self.B * self.T * self.rank
        return buf[:-1].view(B, T), buf[1:].view(B, T)
