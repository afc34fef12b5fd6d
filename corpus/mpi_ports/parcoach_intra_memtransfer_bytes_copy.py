"""The rank is copied byte for byte into another variable (pack, copy the bytes, unpack); a barrier
is guarded by the copy.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/SVG/inter/intra_memtransfer.c
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/SVG/inter/intra_memtransfer.c
MPI original: `myBarrier(); if (rank % 2) MPI_Barrier; memcpy(&z, &rank, sizeof(int)); if (z > 0)
MPI_Barrier; memset(&y, rank, ...); if (y > 0) MPI_Barrier; ...` -- the rank reaches the guards
through memory copies.
Port: the memcpy is `struct.pack` into a bytearray and `struct.unpack` out of it (the Python way
to move raw bytes); only that guard is kept, after a common barrier.
"""
import struct

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    dist.barrier()
    raw = bytearray(4)
    raw[:] = struct.pack("<i", rank)
    (z,) = struct.unpack("<i", bytes(raw))
    if z > 0:
        dist.barrier()  # expect: RC101
    print(f"rank {rank} copied {z} {torch.ones(1).item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
