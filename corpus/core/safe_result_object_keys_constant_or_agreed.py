"""Look-alikes of a result object whose key set is this rank's: the scoring function fills the
object's mapping under constant keys (the same names on every rank, whatever the values), or the
ranks agree on the union of their names before gathering one list per name."""
import collections

import torch.distributed as dist


class TaskOutput:
    def __init__(self, name):
        self.name = name
        self.sample_metrics = collections.defaultdict(list)


def score_shard(task, docs, rank, world_size):
    output = TaskOutput(task.name)
    for doc in docs[rank::world_size]:
        result = task.process_results(doc)
        output.sample_metrics["acc"].append(result["acc"])
        output.sample_metrics["f1"].append(result["f1"])
    return output


def gather_metrics(output, world_size):
    merged = {}
    for metric_key in output.sample_metrics:
        parts = [None] * world_size
        dist.all_gather_object(parts, output.sample_metrics[metric_key])
        merged[metric_key] = [v for part in parts for v in part]
    return merged


def evaluate(task, docs):
    rank, world_size = dist.get_rank(), dist.get_world_size()
    output = score_shard(task, docs, rank, world_size)
    return gather_metrics(output, world_size)


def score_all_names(task, docs, rank, world_size):
    output = TaskOutput(task.name)
    for doc in docs[rank::world_size]:
        for metric_key, value in task.process_results(doc).items():
            output.sample_metrics[metric_key].append(value)
    return output


def gather_agreed(output, world_size):
    names = [None] * world_size
    dist.all_gather_object(names, sorted(output.sample_metrics))
    for metric_key in sorted({name for part in names for name in part}):
        parts = [None] * world_size
        dist.all_gather_object(parts, output.sample_metrics.get(metric_key, []))


def evaluate_agreed(task, docs):
    rank, world_size = dist.get_rank(), dist.get_world_size()
    output = score_all_names(task, docs, rank, world_size)
    gather_agreed(output, world_size)
