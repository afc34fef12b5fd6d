"""Distributed helpers of a diffusion training project launched with mpiexec: torch.distributed
for the gradients, mpi4py for moving a checkpoint's bytes from the rank that read it."""
import io
import os

import torch
import torch.distributed as dist
from mpi4py import MPI

CHUNK = 2**30


def setup_dist():
    comm = MPI.COMM_WORLD
    os.environ["RANK"] = str(comm.Get_rank())
    os.environ["WORLD_SIZE"] = str(comm.Get_size())
    dist.init_process_group(backend="gloo", init_method="env://")


def load_state_dict(path, **kwargs):
    """Read on rank 0 and broadcast the bytes: every process of the world must call this."""
    if MPI.COMM_WORLD.Get_rank() == 0:
        with open(path, "rb") as f:
            data = f.read()
        chunks = (len(data) + CHUNK - 1) // CHUNK
        MPI.COMM_WORLD.bcast(chunks)
        for start in range(0, len(data), CHUNK):
            MPI.COMM_WORLD.bcast(data[start:start + CHUNK])
    else:
        chunks = MPI.COMM_WORLD.bcast(None)
        data = b""
        for _ in range(chunks):
            data += MPI.COMM_WORLD.bcast(None)
    return torch.load(io.BytesIO(data), **kwargs)


def sync_params(params):
    for p in params:
        with torch.no_grad():
            dist.broadcast(p, 0)
