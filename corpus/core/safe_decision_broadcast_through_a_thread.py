"""The look-alike of a decision rank 0 makes: it is broadcast (in a worker thread, through
`asyncio.to_thread`) before anyone acts on it, so every rank takes the same arm (torchtitan's RL
generator loop). Without seeing the broadcast through the thread, the `if` looks like a branch on
rank 0's own choice."""
import asyncio

import torch.distributed as dist


class Generator:
    def __init__(self):
        self.rank = dist.get_rank()
        self.group = dist.new_group(backend="gloo")

    def decide(self):
        return "pull"

    def pull_weights(self):
        dist.barrier(group=self.group)

    async def loop(self):
        while True:
            decision = self.decide() if self.rank == 0 else None
            box = [decision]
            await asyncio.to_thread(dist.broadcast_object_list, box, src=0, group=self.group)
            decision = box[0]
            if decision == "close":
                return
            if decision == "pull":
                self.pull_weights()
