"""Three ranks, three two-member groups, and a cyclic order of broadcasts: each rank waits in a
group its partner will only enter second.

Origin: MPI Bugs Initiative, codes/MayBeRemoved/coll-bcast-deadlock.c in mquinson/MBI
URL: https://github.com/mquinson/MBI/blob/1bf81e65704ce6ff01177bd2af042cdcfd30b1be/codes/MayBeRemoved/coll-bcast-deadlock.c
MPI original: groups {0,1}, {1,2}, {0,2} made with MPI_Comm_create_group; `switch (rank)`:
P0 bcasts on comm0 then comm2, P1 on comm1 then comm0, P2 on comm2 then comm1 -- a cycle.
Needs exactly 3 processes (run this file with 3 ranks).
Port: three `dist.new_group` calls and a `match rank:` with the same cyclic order; `src` is
the global rank of the group's root, as torch expects.
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    if dist.get_world_size() != 3:
        print("This test requires exactly 3 processes")
        dist.destroy_process_group()
        return
    comm0 = dist.new_group([0, 1])
    comm1 = dist.new_group([1, 2])
    comm2 = dist.new_group([0, 2])
    buf1 = torch.tensor([float(rank)])
    buf2 = torch.tensor([float(rank)])
    match rank:
        case 0:  # expect: RC106
            dist.broadcast(buf1, src=0, group=comm0)
            dist.broadcast(buf2, src=2, group=comm2)
        case 1:
            dist.broadcast(buf1, src=1, group=comm1)
            dist.broadcast(buf2, src=0, group=comm0)
        case 2:
            dist.broadcast(buf1, src=2, group=comm2)
            dist.broadcast(buf2, src=1, group=comm1)
    print(f"process {rank}: buf1={buf1.item()}, buf2={buf2.item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
