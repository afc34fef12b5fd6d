"""Rank 0 alone calls the end-of-run routine, which reaches a barrier three calls down.

Origin: MPI Bugs Initiative, codes/MayBeRemoved/coll-mismatch-barrier-inter.c in mquinson/MBI
(its header says "Origin: Parcoach")
URL: https://github.com/mquinson/MBI/blob/1bf81e65704ce6ff01177bd2af042cdcfd30b1be/codes/MayBeRemoved/coll-mismatch-barrier-inter.c
MPI original: `void mybarrier(MPI_Comm comm) { MPI_Barrier(comm); }`; main: `if (rank == 0)
mybarrier(MPI_COMM_WORLD);` -- "P0 calls MPI_Barrier while the others call nothing", one call
away.
Port: the wrapper keeps its communicator parameter (`group`) and sits under two more levels of
the job's own code, `finish_run -> close_epoch -> mybarrier`, as a barrier buried in a shutdown
path would.
"""
import torch
import torch.distributed as dist


def mybarrier(group=None) -> None:
    dist.barrier(group=group)


def close_epoch(stats: torch.Tensor, group=None) -> None:
    stats.div_(2)
    mybarrier(group)


def finish_run(stats: torch.Tensor) -> None:
    print(f"final stats {stats.tolist()}")
    close_epoch(stats)


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    if dist.get_world_size() < 2:
        print("This test needs at least 2 processes to produce a bug")
    stats = torch.tensor([1.0, 2.0])
    if rank == 0:
        finish_run(stats)  # expect: RC101
    print(f"rank {rank} finished normally")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
