"""The look-alike in which the method's own code is what makes it safe: the task built through a
registry hands back an epoch iterator sharded by rank, and the loop runs while the iterator's
epoch counter is below the limit. The counter is the same on every rank (each rank advances one
epoch per round); only which batches a rank reads depends on its shard. Taking the iterator for an
object wholly of the rank's making would call the loop uneven."""
import torch
import torch.distributed as dist


class EpochIterator:
    def __init__(self, batches, shard_id, num_shards, epoch=1):
        self.batches = batches
        self.shard_id = shard_id
        self.num_shards = num_shards
        self.epoch = epoch

    @property
    def next_epoch_idx(self):
        return self.epoch + 1

    def advance(self):
        self.epoch += 1


class Task:
    def get_batch_iterator(self, batches, shard_id, num_shards):
        return EpochIterator(batches, shard_id=shard_id, num_shards=num_shards)


TASKS = {"lm": Task}


class Trainer:
    def __init__(self, task):
        self.task = task

    def train_iterator(self, batches):
        return self.task.get_batch_iterator(batches, shard_id=dist.get_rank(), num_shards=dist.get_world_size())


def main(name, batches, max_epoch):
    trainer = Trainer(TASKS[name]())
    epoch_itr = trainer.train_iterator(batches)
    while epoch_itr.next_epoch_idx <= max_epoch:
        loss = torch.zeros(1)
        dist.all_reduce(loss)
        epoch_itr.advance()
