"""The look-alike of safe_gather_object_on_both_arms_one_under_an_is_distributed_guard.py where the main
process, under the same `if is_distributed():`, waits in a barrier instead of receiving: the other
ranks' `gather_object` has no partner on the main process, which waits in a barrier they never
enter: the two arms issue different collectives, as plainly as without the inner test.
"""
import torch.distributed as dist


def is_distributed():
    return dist.is_available() and dist.is_initialized()


def is_main_process():
    if not is_distributed():
        return True
    return dist.get_rank() == 0


def collect_bench_names(local_names, world_size, path):
    results = {}
    if is_distributed() and not is_main_process():  # expect: RC106
        dist.gather_object(local_names, dst=0)
    else:
        if is_distributed():
            dist.barrier()
        results.update(local_names)
    return results
