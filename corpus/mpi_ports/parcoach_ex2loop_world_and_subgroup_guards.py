"""In a loop, odd ranks wait in a world barrier and rank 0 waits in a barrier on the even-rank
subgroup: two guarded collectives on two communicators.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/SVG/ex2loop.c
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/SVG/ex2loop.c
MPI original: `MPI_Comm_split(WORLD, r % 2, r, &newcom); for (i = 0; i < 5; i++) { if (r % 2)
MPI_Barrier(WORLD); else printf; if (!r % 2) MPI_Barrier(newcom); else printf; }` -- in C,
`!r % 2` is `(!r) % 2`, true on rank 0 only.
Port: the split is two `dist.new_group` calls; the second guard is written `rank == 0` (what the
C expression computes). The world barrier is the one no even rank issues.
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    r = dist.get_rank()
    s = dist.get_world_size()
    evens = dist.new_group(list(range(0, s, 2)))
    odds = dist.new_group(list(range(1, s, 2)))
    newcom = odds if r % 2 else evens
    for i in range(5):
        if r % 2:
            dist.barrier()  # expect: RC101
        else:
            print("do nothing")
        if r == 0:
            dist.barrier(group=newcom)
        else:
            print("do nothing")
    print(f"rank {r} done, {torch.ones(1).item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
