"""An async server loop runs its blocking collectives in a worker thread (`asyncio.to_thread`), so
the event loop can serve requests meanwhile. The barrier handed to the thread is still a barrier
of this rank: run only by rank 0, the others never join it."""
import asyncio

import torch.distributed as dist


class Server:
    def __init__(self):
        self.rank = dist.get_rank()

    async def reload(self):
        if self.rank == 0:
            await asyncio.to_thread(dist.barrier)  # expect: RC101


def main():
    asyncio.run(Server().reload())
