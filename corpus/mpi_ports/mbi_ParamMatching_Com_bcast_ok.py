"""Correct: every rank broadcasts from rank 0 on the same freshly created group.

Origin: MPI Bugs Initiative, generator scripts/generators/CollComGenerator.py in mquinson/MBI,
generated code ParamMatching_Com_MPI_Bcast_ok.c
URL: https://github.com/mquinson/MBI/blob/1bf81e65704ce6ff01177bd2af042cdcfd30b1be/scripts/generators/CollComGenerator.py
MPI original: `MPI_Comm_split(MPI_COMM_WORLD, 0, nprocs - rank, &newcom); MPI_Bcast(buf,
buff_size, type, root, newcom);` -- "All ranks in newcom call MPI_Bcast with correct arguments".
Port: `newcom = dist.new_group(all ranks)`; `dist.broadcast(..., src=0, group=newcom)` on
every rank.
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    nprocs = dist.get_world_size()
    newcom = dist.new_group(list(range(nprocs)))
    buf = torch.full((128,), float(rank))
    dist.broadcast(buf, src=0, group=newcom)
    print(f"rank {rank} buf[0] {buf[0].item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
