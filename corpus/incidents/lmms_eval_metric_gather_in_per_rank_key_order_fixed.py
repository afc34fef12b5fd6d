"""Safe twin of lmms_eval_metric_gather_in_per_rank_key_order: the ranks agree on one sorted key
list first and gather in that order, an empty list for a key a rank lacks (the PR's fix).

Thread: https://github.com/EvolvingLMMs-Lab/lmms-eval/pull/1089
"""
import collections

import torch.distributed as dist


class TaskOutput:
    def __init__(self, task_name: str):
        self.task_name = task_name
        self.sample_metrics = collections.defaultdict(list)


def score_shard(lm, task, rank: int, world_size: int) -> TaskOutput:
    task_output = TaskOutput(task.name)
    for doc in task.docs[rank::world_size]:
        result = lm.generate(doc)
        for metric_key, value in task.process_results(doc, result).items():
            task_output.sample_metrics[metric_key].append(value)
    return task_output


def canonical_metric_keys(task_output: TaskOutput, rank: int, world_size: int) -> list:
    all_keys = [None] * world_size if rank == 0 else None
    dist.gather_object(list(task_output.sample_metrics.keys()), all_keys, dst=0)
    agreed = [sorted({key for keys in all_keys for key in keys}) if rank == 0 else None]
    dist.broadcast_object_list(agreed, src=0)
    return agreed[0]


def gather_task_metrics(task_output: TaskOutput, rank: int, world_size: int) -> dict:
    merged = {}
    for metric_key in canonical_metric_keys(task_output, rank, world_size):
        metric_list = [None] * world_size if rank == 0 else None
        dist.gather_object(task_output.sample_metrics.get(metric_key, []), metric_list, dst=0)
        if rank == 0:
            merged[metric_key] = [value for part in metric_list for value in part]
    return merged


def evaluate(lm, task) -> dict:
    rank, world_size = dist.get_rank(), dist.get_world_size()
    task_output = score_shard(lm, task, rank, world_size)
    return gather_task_metrics(task_output, rank, world_size)
