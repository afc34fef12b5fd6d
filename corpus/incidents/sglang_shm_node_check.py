"""Reconstruction of https://github.com/sgl-project/sglang/issues/34800

Project: sgl-project/sglang (srt/distributed/parallel_state.py).
What hung: on macOS, `make_shm_name("nodecheck")` yields a 32-character name,
over the 31-character POSIX shared-memory limit, so
`shared_memory.SharedMemory(create=True, name=...)` raises OSError on the
source rank inside `in_the_same_node_as`. That OSError is swallowed by a
`contextlib.suppress(OSError)` that also wraps the broadcast_object_list, so the
source rank skips its broadcast and goes on to the barrier while every other
rank blocks in broadcast_object_list: a permanent deadlock with no exception,
no log line and no timeout (reporter's root-cause analysis in the issue).
Fix (PR #34910): the OSError suppression covers only the local shared-memory
create/open; the source broadcasts `None` when creation failed, so every rank
stays in the same collective. (PR #35046 separately shortens the names.)
The caller below is trimmed from the tensor-parallel group setup.
expected: RC105 at line 50
"""
import contextlib
import logging
import os
import secrets
from multiprocessing import shared_memory
from typing import List
from unittest.mock import patch

import torch
import torch.distributed
from torch.distributed import ProcessGroup

logger = logging.getLogger(__name__)


def make_shm_name(kind: str) -> str:
    return f"sgl_shm_{kind}_{os.getpid()}_{secrets.token_hex(4)}"


def in_the_same_node_as(pg: ProcessGroup, source_rank: int = 0) -> List[bool]:
    assert torch.distributed.get_backend(pg) != torch.distributed.Backend.NCCL, (
        "in_the_same_node_as should be tested with a non-NCCL group."
    )
    rank = torch.distributed.get_rank(group=pg)
    world_size = torch.distributed.get_world_size(group=pg)
    is_in_the_same_node = torch.tensor([0] * world_size, dtype=torch.int32)
    ranks = torch.distributed.get_process_group_ranks(pg)

    magic_message = b"magic_message"
    shm = None

    try:
        with contextlib.suppress(OSError):  # expect: RC105
            if rank == source_rank:
                shm = shared_memory.SharedMemory(create=True, size=128, name=make_shm_name("nodecheck"))
                shm.buf[: len(magic_message)] = magic_message
                torch.distributed.broadcast_object_list([shm.name], src=ranks[source_rank], group=pg)
                is_in_the_same_node[rank] = 1
            else:
                recv = [None]
                torch.distributed.broadcast_object_list(recv, src=ranks[source_rank], group=pg)
                name = recv[0]
                with patch("multiprocessing.resource_tracker.register", lambda *args, **kwargs: None):
                    shm = shared_memory.SharedMemory(name=name)
                if shm.buf[: len(magic_message)] == magic_message:
                    is_in_the_same_node[rank] = 1
    except Exception as e:
        logger.error("Error ignored in is_in_the_same_node: %s", e)
    finally:
        if shm:
            shm.close()

    torch.distributed.barrier(group=pg)

    with contextlib.suppress(OSError):
        if rank == source_rank and shm:
            shm.unlink()
    torch.distributed.all_reduce(is_in_the_same_node, group=pg)
    return [x == 1 for x in is_in_the_same_node.tolist()]


class GroupCoordinator:
    def __init__(self, group_ranks: List[List[int]], local_rank: int, backend: str = "nccl"):
        self.rank = torch.distributed.get_rank()
        self.local_rank = local_rank
        for ranks in group_ranks:
            device_group = torch.distributed.new_group(ranks, backend=backend)
            cpu_group = torch.distributed.new_group(ranks, backend="gloo")
            if self.rank in ranks:
                self.ranks = ranks
                self.world_size = len(ranks)
                self.rank_in_group = ranks.index(self.rank)
                self.device_group = device_group
                self.cpu_group = cpu_group
        self.device = torch.device(f"cuda:{local_rank}") if torch.cuda.is_available() else torch.device("cpu")
        self.use_custom_allreduce = False
        if self.world_size > 1:
            same_node = in_the_same_node_as(self.cpu_group, source_rank=0)
            self.use_custom_allreduce = all(same_node)
            logger.info("TP group %s same-node=%s custom_allreduce=%s", self.ranks, same_node,
                        self.use_custom_allreduce)

    def all_reduce(self, input_: torch.Tensor) -> torch.Tensor:
        if self.world_size == 1:
            return input_
        torch.distributed.all_reduce(input_, group=self.device_group)
        return input_
