"""A small run-parameters object holds both the rank and the world size; a barrier is guarded by
its rank field.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/src/field-sensitive.c
(also parcoach/microbenchmarks field-sensitive.c)
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/src/field-sensitive.c
MPI original: `struct hydroparam { int mype; int nproc; }`; `f(H)` fills `H->nproc` with
MPI_Comm_size and `H->mype` with MPI_Comm_rank, then `if (H->mype > 1) MPI_Barrier(...)`.
The benchmark tests whether an analysis keeps the two fields apart.
Port: a `HydroParams` dataclass filled by `setup()`; the barrier is under `params.mype > 0` (the
original's `> 1` needs 3 ranks to bite; `> 0` keeps the same field on a 2-rank run). The
matching `_ok` port guards on the `nproc` field instead.
"""
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass
class HydroParams:
    mype: int = 0
    nproc: int = 1


def setup(params: HydroParams) -> None:
    params.nproc = dist.get_world_size()
    params.mype = dist.get_rank()


def main():
    dist.init_process_group("gloo")
    params = HydroParams()
    setup(params)
    grid = torch.zeros(16, 16)
    if params.mype > 0:
        dist.barrier()  # expect: RC101
    grid += params.mype
    print(f"rank {params.mype}/{params.nproc} grid {grid.mean().item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
