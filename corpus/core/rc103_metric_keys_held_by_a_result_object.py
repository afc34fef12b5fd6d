"""The per-rank key set lives in a field of a result object: a scoring function builds the
object, fills `output.sample_metrics[key]` with the metric names this rank's documents yield and
returns it; another function gathers one list per key. The object carries its fields out of the
function that returns it and into the function it is passed to, so the loop over its keys runs a
different number of times on a rank whose share produced other names. The same where the object
is made by the caller and filled by a helper it is passed to."""
import collections

import torch.distributed as dist


class TaskOutput:
    def __init__(self, name):
        self.name = name
        self.sample_metrics = collections.defaultdict(list)


def score_shard(task, docs, rank, world_size):
    output = TaskOutput(task.name)
    for doc in docs[rank::world_size]:
        for metric_key, value in task.process_results(doc).items():
            output.sample_metrics[metric_key].append(value)
    return output


def gather_metrics(output, world_size):
    merged = {}
    for metric_key in output.sample_metrics:  # expect: RC103
        parts = [None] * world_size
        dist.all_gather_object(parts, output.sample_metrics[metric_key])
        merged[metric_key] = [v for part in parts for v in part]
    return merged


def evaluate(task, docs):
    rank, world_size = dist.get_rank(), dist.get_world_size()
    output = score_shard(task, docs, rank, world_size)
    return gather_metrics(output, world_size)


def fill(output, samples, rank, world_size):
    for sample in samples[rank::world_size]:
        output.sample_metrics[sample["task"]].append(sample["score"])


def evaluate_in_place(task, samples):
    rank, world_size = dist.get_rank(), dist.get_world_size()
    output = TaskOutput(task.name)
    fill(output, samples, rank, world_size)
    for key in sorted(output.sample_metrics):  # expect: RC103
        dist.barrier()
