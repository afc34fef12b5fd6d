"""Rank 0 all-reduces before sending to rank 1; rank 1 receives before the all-reduce: the
point-to-point pair and the collective are ordered differently on the two ranks.

Origin: MPI Bugs Initiative, generator scripts/generators/CollP2PMatchingGenerator.py in
mquinson/MBI, generated code CallOrdering_MPI_Recv_MPI_Send_MPI_Allreduce_nok.c
URL: https://github.com/mquinson/MBI/blob/1bf81e65704ce6ff01177bd2af042cdcfd30b1be/scripts/generators/CollP2PMatchingGenerator.py
MPI original: `if (rank == 0) { MPI_Allreduce(...); MPI_Send(..., 1, ...); } else if (rank == 1)
{ MPI_Recv(..., 0, ...); MPI_Allreduce(...); }` -- "The MPI_Send corresponding to the MPI_Recv
is after MPI_Allreduce, while MPI_Recv is before MPI_Allreduce. This is a deadlock."
Port: `dist.send`/`dist.recv` and `dist.all_reduce` in the same orders; the second arm is
`else` (this is a 2-rank program, so it is rank 1, as in MBI's `mpirun -np 2`).
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    total = torch.ones(1)
    msg = torch.zeros(1)
    if rank == 0:  # expect: RC106
        dist.all_reduce(total)
        msg.fill_(7)
        dist.send(msg, dst=1)
    else:
        dist.recv(msg, src=0)
        dist.all_reduce(total)
    print(f"rank {rank} total {total.item()} msg {msg.item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
