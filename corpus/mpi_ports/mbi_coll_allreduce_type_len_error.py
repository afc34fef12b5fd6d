"""Every rank all-reduces a slice of its buffer, but the slice is one element longer on odd
ranks.

Origin: MPI Bugs Initiative, codes/MayBeRemoved/coll-allreduce-type-len-error.c in mquinson/MBI
(the count-mismatch member of the ParamMatching family)
URL: https://github.com/mquinson/MBI/blob/1bf81e65704ce6ff01177bd2af042cdcfd30b1be/codes/MayBeRemoved/coll-allreduce-type-len-error.c
MPI original: `int inbuf[18], outbuf[18]; ... MPI_Allreduce(outbuf, inbuf, 18 + rank % 2, MPI_INT,
MPI_SUM, MPI_COMM_WORLD);` (needs 3 processes; the odd rank passes a count of 19).
Port: a 19-element buffer and `dist.all_reduce(outbuf[: 18 + rank % 2])`; the mismatch already
shows on 2 ranks.
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    outbuf = torch.arange(19, dtype=torch.float32) + rank * 18
    dist.all_reduce(outbuf[: 18 + rank % 2])  # expect: RC104
    print(f"Signing off, rank {rank}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
