"""The rank is stored in the last node of a linked list and read back by walking the list; a
barrier is guarded by the value found.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/SVG/inter/intra_linkedlist.c
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/SVG/inter/intra_linkedlist.c
MPI original: builds an 11-node list, `MPI_Comm_rank(WORLD, cursor->data)` into the tail, walks
10 nodes from the head and `if (value > 0) MPI_Barrier(...)`; an `if (argc > 0)` barrier follows.
Port: a `Node` class with `data`/`next`; the rank goes into the tail's `data`.
"""
import sys
from typing import Optional

import torch
import torch.distributed as dist


class Node:
    def __init__(self) -> None:
        self.data: Optional[int] = None
        self.next: Optional["Node"] = None


def main():
    first = Node()
    cursor = first
    for _ in range(10):
        cursor.next = Node()
        cursor = cursor.next
    dist.init_process_group("gloo")
    cursor.data = dist.get_rank()
    node = first
    for _ in range(10):
        node = node.next
    value = node.data
    if value > 0:
        dist.barrier()  # expect: RC101
    if len(sys.argv) > 0:
        dist.barrier()
    print(f"value {value} {torch.ones(1).item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
