"""Correct: the run-parameters object holds the rank and the world size, and the barrier is
guarded by the world-size field only.

Origin: PARCOACH microbenchmarks, parcoach/microbenchmarks field-sensitive.c (README: the
barrier "is conditionally called depending on the value of H->nproc"; every method it compares
reports a false positive because `mype` and `nproc` share a struct). The PARCOACH test suite's
copy, tests/MPI/basic/src/field-sensitive.c, guards on `H->mype` instead (ported as
parcoach_field_sensitive_rank_field.py).
URL: https://github.com/parcoach/microbenchmarks/blob/841bb8e4874ac41ad0df25f2a5f34bffbd864f8c/README.md
MPI original: `H->nproc` from MPI_Comm_size and `H->mype` from MPI_Comm_rank, then the
barrier under a test of `H->nproc`.
Port: a `HydroParams` dataclass; the barrier is under `params.nproc > 1`.
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
    if params.nproc > 1:
        dist.barrier()
    grid += params.mype
    print(f"rank {params.mype}/{params.nproc} grid {grid.mean().item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
