"""A file rank 0 writes, looked for on every rank: each process asks the filesystem itself, and a
process that looks before rank 0 has written it (or through a shared filesystem's stale cache)
gets another answer. KempnerForge#49: `train_state_path.exists()` disagreed between ranks and the
`broadcast_object_list` under it deadlocked. FastVideo#598: ranks that already saw rank 0's new
sharding plan returned before the barrier rank 0 waits in."""
import os
import pickle

import torch
import torch.distributed as dist


class CheckpointManager:
    def __init__(self, root):
        self.root = root

    def save(self, step, train_state):
        if dist.get_rank() == 0:
            torch.save(train_state, os.path.join(self.root, f"step_{step}", "train_state.pt"))
        dist.barrier()

    def load(self, step):
        path = os.path.join(self.root, f"step_{step}", "train_state.pt")
        state = {}
        if os.path.exists(path):
            payload = [torch.load(path) if dist.get_rank() == 0 else None]
            dist.broadcast_object_list(payload, src=0)  # expect: RC101
            state = payload[0]
        return state


def sharding_plan(cache_dir, files, world_size):
    plan_dir = os.path.join(cache_dir, f"plan_{world_size}")
    if os.path.isdir(plan_dir):
        with open(os.path.join(plan_dir, "plan.pkl"), "rb") as f:
            return pickle.load(f)  # expect: RC102
    if dist.get_rank() == 0:
        os.makedirs(plan_dir, exist_ok=True)
        with open(os.path.join(plan_dir, "plan.pkl"), "wb") as f:
            pickle.dump([files[i::world_size] for i in range(world_size)], f)
    dist.barrier()
    return sharding_plan(cache_dir, files, world_size)
