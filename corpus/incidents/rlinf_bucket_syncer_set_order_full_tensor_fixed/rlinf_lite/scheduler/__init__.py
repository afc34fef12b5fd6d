"""Trimmed rlinf/scheduler: each Worker is one process of a named worker group; the actor group
trains under FSDP2 and hands weights to the rollout group through a Channel (a Ray-backed queue,
not a torch.distributed collective)."""
import os

import torch
import torch.distributed as dist
from ray.util.queue import Queue


class Channel:
    def __init__(self, name: str, maxsize: int = 0):
        self._queue = Queue(maxsize=maxsize, actor_options={"name": name, "get_if_exists": True})

    async def put(self, item):
        await self._queue.put_async(item)

    async def get(self):
        return await self._queue.get_async()


class Worker:
    torch_device_type = "cuda"

    def __init__(self):
        self._rank = int(os.environ["RANK"])
        self._world_size = int(os.environ["WORLD_SIZE"])
        if not dist.is_initialized():
            dist.init_process_group("nccl")
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
