"""A sync helper issues two barriers on the non-zero ranks and one on rank 0; it is called under a
guard on the world size, which every rank answers alike.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/src/mismatch_barrier2.c
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/src/mismatch_barrier2.c
MPI original: `g()` reads the rank and does `if (r) { MPI_Barrier; MPI_Barrier; } else {
MPI_Barrier; }`; main calls `g()` under `if (size > 1)`. Both arms issue barriers, but not the
same number of them.
Port: `sync_after_epoch()` reads the rank itself and branches on it the same way (one barrier
"for the writes", one "for the reads" on the non-zero ranks, only one on rank 0); main calls it
under `if world_size > 1`.
"""
import torch
import torch.distributed as dist
import torch.nn as nn


def sync_after_epoch() -> None:
    r = dist.get_rank()
    if r:  # expect: RC106
        dist.barrier()
        dist.barrier()
    else:
        dist.barrier()


def main():
    dist.init_process_group("gloo")
    world_size = dist.get_world_size()
    model = nn.Linear(4, 4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        loss = model(torch.randn(8, 4)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    if world_size > 1:
        sync_after_epoch()
    print(f"rank {dist.get_rank()} finished the epoch")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
