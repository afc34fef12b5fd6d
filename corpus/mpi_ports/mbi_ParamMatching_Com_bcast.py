"""Every rank broadcasts from rank 0, but odd ranks pass the world group and even ranks the
subgroup the job created for the broadcast.

Origin: MPI Bugs Initiative, generator scripts/generators/CollComGenerator.py in mquinson/MBI,
generated code ParamMatching_Com_MPI_Bcast_nok.c
URL: https://github.com/mquinson/MBI/blob/1bf81e65704ce6ff01177bd2af042cdcfd30b1be/scripts/generators/CollComGenerator.py
MPI original: `MPI_Comm newcom; MPI_Comm_split(MPI_COMM_WORLD, 0, nprocs - rank, &newcom); if
(rank % 2) newcom = MPI_COMM_WORLD; MPI_Bcast(buf, buff_size, type, root, newcom);` -- "Odd ranks
call the collective on newcom while even ranks call the collective on MPI_COMM_WORLD".
Port: `newcom = dist.new_group(all ranks)` stands for the split (one color, all ranks); odd ranks
switch `group` back to the default group (`None`) before `dist.broadcast(..., group=group)`.
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    nprocs = dist.get_world_size()
    newcom = dist.new_group(list(range(nprocs)))
    group = newcom
    if rank % 2:
        group = None
    buf = torch.full((128,), float(rank))
    dist.broadcast(buf, src=0, group=group)  # expect: RC104
    print(f"rank {rank} buf[0] {buf[0].item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
