"""Benchmark results collected on the main process, as axolotl's bench-eval callback does it: the
other ranks send with `gather_object(local, dst=0)`; the main process receives with
`gather_object(local, gathered, dst=0)` under `if is_distributed():`, whose other arm runs only in
a one-process job. In a distributed job both arms of the main-process test issue the one gather.
"""
import torch.distributed as dist


def is_distributed():
    return dist.is_available() and dist.is_initialized()


def is_main_process():
    if not is_distributed():
        return True
    return dist.get_rank() == 0


def collect_bench_names(local_names, world_size):
    gathered = [{} for _ in range(world_size)]
    results = {}
    if is_distributed() and not is_main_process():
        dist.gather_object(local_names, dst=0)
    else:
        if is_distributed():
            dist.gather_object(local_names, gathered, dst=0)
        else:
            gathered = [local_names]
        for names in gathered:
            results.update(names)
    return results
