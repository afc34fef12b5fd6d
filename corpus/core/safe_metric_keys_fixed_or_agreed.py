"""Look-alikes of a mapping keyed by this rank's data: the keys are written as constants (the
same on every rank, whatever the values), keyed by the rank itself (one key on every rank), or
agreed first (every rank loops over the sorted union of all ranks' names, gathered)."""
import collections

import torch
import torch.distributed as dist


def constant_keys(docs):
    rank, world_size = dist.get_rank(), dist.get_world_size()
    totals = collections.defaultdict(list)
    for doc in docs[rank::world_size]:
        totals["loss"].append(doc["loss"])
        totals["tokens"].append(doc["tokens"])
    for key in ("loss", "tokens"):
        dist.all_reduce(torch.tensor(sum(totals[key])))


def one_key_per_rank(value):
    rank = dist.get_rank()
    mine = {}
    mine[rank] = value
    for key in mine:
        dist.all_reduce(torch.tensor(mine[key]))


def agreed_names(task, docs):
    rank, world_size = dist.get_rank(), dist.get_world_size()
    sample_metrics = collections.defaultdict(list)
    for doc in docs[rank::world_size]:
        for metric_key, value in task.process_results(doc).items():
            sample_metrics[metric_key].append(value)
    names = [None] * world_size
    dist.all_gather_object(names, sorted(sample_metrics))
    for metric_key in sorted({name for part in names for name in part}):
        parts = [None] * world_size
        dist.all_gather_object(parts, sample_metrics.get(metric_key, []))


def grouped_under_constant_keys(samples):
    rank, world_size = dist.get_rank(), dist.get_world_size()
    groups = {}
    for sample in samples[rank::world_size]:
        groups.setdefault("scores", []).append(sample["score"])
        groups.setdefault("lengths", []).append(len(sample["text"]))
    for name in ("scores", "lengths"):
        dist.all_reduce(torch.tensor(float(sum(groups.get(name, [])))))
