"""Look-alikes of a file rank 0 writes and every rank looks for: rank 0 alone tests for it and
broadcasts the answer (KempnerForge#50's fix); every rank writes the file it looks for (no rank test
around the write); rank 0 writes one file and the ranks test for another one, which no rank
writes here (a configuration file the user gives); rank 0 leaves a flag file and every rank
looks for it only after a barrier that follows the write (RTG's early stop); a runner's resume
looking for the pointer file its checkpoint hook writes on rank 0 (another component, and in
practice an earlier job: every rank finds it; rankcheck follows a file only within the class or
the function that both writes and tests it)."""
import os
from pathlib import Path

import torch
import torch.distributed as dist


def load_train_state(ckpt_dir):
    path = os.path.join(ckpt_dir, "train_state.pt")
    found = [os.path.exists(path) if dist.get_rank() == 0 else None]
    dist.broadcast_object_list(found, src=0)
    state = {}
    if found[0]:
        payload = [torch.load(path) if dist.get_rank() == 0 else None]
        dist.broadcast_object_list(payload, src=0)
        state = payload[0]
    return state


def save_train_state(ckpt_dir, state):
    if dist.get_rank() == 0:
        torch.save(state, os.path.join(ckpt_dir, "train_state.pt"))
    dist.barrier()


def every_rank_writes(local_dir, shard):
    torch.save(shard, os.path.join(local_dir, "local_cache.pt"))
    if os.path.exists(os.path.join(local_dir, "local_cache.pt")):
        dist.barrier()


def resume(ckpt_dir, config_path):
    if dist.get_rank() == 0:
        torch.save({"step": 0}, os.path.join(ckpt_dir, "train_state.pt"))
    if os.path.exists(config_path):
        dist.barrier()


def train(model_dir, batches, should_stop):
    flag = Path(model_dir) / "_EARLY_STOPPED"
    for batch in batches:
        loss = batch.sum()
        dist.all_reduce(loss)
        if dist.get_rank() == 0 and should_stop(loss):
            flag.touch()
        dist.barrier()
        if flag.exists():
            break


class CheckpointHook:
    def after_epoch(self, work_dir, state):
        if dist.get_rank() == 0:
            path = os.path.join(work_dir, "epoch.pth")
            torch.save(state, path)
            with open(os.path.join(work_dir, "last_checkpoint"), "w") as f:
                f.write(path)


def find_latest_checkpoint(work_dir):
    pointer = os.path.join(work_dir, "last_checkpoint")
    if not os.path.exists(pointer):
        return None
    with open(pointer) as f:
        return f.read().strip()


def resume(work_dir, model):
    latest = find_latest_checkpoint(work_dir)
    if latest is not None:
        model.load_state_dict(torch.load(latest))
        dist.barrier()

