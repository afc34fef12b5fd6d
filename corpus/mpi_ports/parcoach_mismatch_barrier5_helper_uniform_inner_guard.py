"""A helper syncs only when the job is large enough (a condition every rank shares), but it is
called from inside an odd-rank branch.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/src/mismatch_barrier5.c
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/src/mismatch_barrier5.c
MPI original: `void g(int s) { if (s > 256) MPI_Barrier(...); }`; main does a common
MPI_Barrier and then `if (r % 2) g(s);`. The guard inside g is on the (uniform) size; the guard
around the call is on the rank.
Port: `sync_if_parallel(world_size)` barriers when `world_size > 1` (the original's `s > 256` would
never be true on a 2-rank run, so the threshold is lowered to what makes the barrier reachable);
main calls it under `if rank % 2:` after a barrier every rank issues.
"""
import torch
import torch.distributed as dist


def sync_if_parallel(world_size: int) -> None:
    if world_size > 1:
        dist.barrier()


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    dist.barrier()
    buf = torch.randn(32)
    if rank % 2:
        buf.mul_(2)
        sync_if_parallel(world_size)  # expect: RC101
    print(f"rank {rank} norm {buf.norm():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
