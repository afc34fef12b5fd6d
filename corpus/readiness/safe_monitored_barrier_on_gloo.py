"""Look-alikes of RC202: a gloo side group for the barrier of an NCCL job, a gloo job, a barrier
under a backend test, and groups and backends that come from where rankcheck cannot read."""
from datetime import timedelta

import torch.distributed as dist


def nccl_job(args, make_group):
    dist.init_process_group("nccl", timeout=timedelta(minutes=5))
    gloo_group = dist.new_group(backend="gloo", timeout=timedelta(minutes=5))
    dist.monitored_barrier(group=gloo_group, timeout=timedelta(seconds=30))
    if dist.get_backend() == "gloo":
        dist.monitored_barrier()
    else:
        dist.barrier()
    dist.monitored_barrier(group=make_group())
    dist.monitored_barrier(args.group)


def gloo_job():
    dist.init_process_group(backend=dist.Backend.GLOO, timeout=timedelta(minutes=5))
    dist.monitored_barrier(timeout=timedelta(seconds=30))


def configured_job(args):
    dist.init_process_group(backend=args.backend, timeout=timedelta(minutes=5))
    dist.monitored_barrier(timeout=timedelta(seconds=30))


if __name__ == "__main__":
    gloo_job()
