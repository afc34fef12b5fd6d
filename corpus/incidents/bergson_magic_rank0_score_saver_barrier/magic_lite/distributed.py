"""Process launch: one worker per GPU, a cleanup barrier before the process group goes away."""
import io
import os
import socket
from contextlib import nullcontext, redirect_stdout

import torch.distributed as dist
import torch.multiprocessing as mp


def _free_port() -> str:
    with socket.socket() as s:
        s.bind(("", 0))
        return str(s.getsockname()[1])


def dist_worker(local_rank, worker, world_size, master_addr, master_port, worker_args):
    rank = local_rank
    os.environ.update(LOCAL_RANK=str(local_rank), RANK=str(rank), WORLD_SIZE=str(world_size),
                      MASTER_ADDR=master_addr, MASTER_PORT=master_port)
    try:
        with nullcontext() if rank == 0 else redirect_stdout(io.StringIO()):
            worker(rank, local_rank, world_size, *worker_args)
    finally:
        if dist.is_initialized():
            try:
                dist.barrier()
            except Exception as e:
                print(f"Barrier failed during cleanup: {e}")
            dist.destroy_process_group()


def launch_distributed_run(worker, worker_args, nproc_per_node: int):
    master_addr = os.environ.get("MASTER_ADDR", "localhost")
    master_port = os.environ.get("MASTER_PORT", _free_port())
    mp.spawn(dist_worker, args=(worker, nproc_per_node, master_addr, master_port, worker_args), nprocs=nproc_per_node)
