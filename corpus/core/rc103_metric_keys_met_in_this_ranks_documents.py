"""A mapping keyed by what this rank's share of the data yields: lm-evaluation-harness-style
scoring collects `sample_metrics[metric_key].append(value)` for the metric names its documents
produce, then gathers one list per key. A rank whose share is empty (or whose documents produce
another set of names) loops a different number of times and the gathers pair up wrongly or wait.
The same with a plain store (`by_name[name] = value`)."""
import collections

import torch.distributed as dist


def score(task, docs):
    rank, world_size = dist.get_rank(), dist.get_world_size()
    sample_metrics = collections.defaultdict(list)
    for doc in docs[rank::world_size]:
        for metric_key, value in task.process_results(doc).items():
            sample_metrics[metric_key].append(value)
    merged = {}
    for metric_key in sample_metrics:  # expect: RC103
        parts = [None] * world_size
        dist.all_gather_object(parts, sample_metrics[metric_key])
        merged[metric_key] = [v for part in parts for v in part]
    return merged


def last_value_per_name(records):
    rank, world_size = dist.get_rank(), dist.get_world_size()
    by_name = {}
    for record in records[rank::world_size]:
        by_name[record["name"]] = record["value"]
    for name in sorted(by_name):  # expect: RC103
        print(name, by_name[name])
        dist.barrier()


def grouped_by_task(samples):
    rank, world_size = dist.get_rank(), dist.get_world_size()
    groups = {}
    for sample in samples[rank::world_size]:
        groups.setdefault(sample["task"], []).append(sample["score"])
    for task in groups:  # expect: RC103
        print(task)
        dist.barrier()
