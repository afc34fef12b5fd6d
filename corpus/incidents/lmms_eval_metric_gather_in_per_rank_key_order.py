"""lmms-eval's evaluator: each rank scores its share of a task's documents and the per-sample
metrics are gathered to rank 0 with one `gather_object` per metric key, in the order this rank's
dict holds them.

Thread: https://github.com/EvolvingLMMs-Lab/lmms-eval/pull/1089 ("Fix multi-GPU metric gather key ordering")
Project: EvolvingLMMs-Lab/lmms-eval (multimodal model evaluation)
What went wrong: the gather loop iterated `task_output.sample_metrics` directly. With many metric
keys per sample (SAM3 / SA-Co/Gold), ranks that processed different samples inserted the keys in
a different order, so the collectives paired different metrics (silently corrupted values), and a
rank missing a key issued one gather fewer, leaving the others waiting.
Fix (the PR): agree on a canonical key order first (gather every rank's keys to rank 0, merge and
sort, broadcast back), then gather in that order, with an empty list for a key a rank lacks.
Expected rankcheck finding: RC103 on the loop over this rank's metric keys.
(The task and result structures are reconstructed.)
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


def gather_task_metrics(task_output: TaskOutput, rank: int, world_size: int) -> dict:
    merged = {}
    for metric_key in task_output.sample_metrics:  # expect: RC103
        metric_list = [None] * world_size if rank == 0 else None
        dist.gather_object(task_output.sample_metrics[metric_key], metric_list, dst=0)
        if rank == 0:
            merged[metric_key] = [value for part in metric_list for value in part]
    return merged


def evaluate(lm, task) -> dict:
    rank, world_size = dist.get_rank(), dist.get_world_size()
    task_output = score_shard(lm, task, rank, world_size)
    return gather_task_metrics(task_output, rank, world_size)
