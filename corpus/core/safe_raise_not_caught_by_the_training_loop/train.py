"""The look-alike: nothing catches the loader's IOError, so the rank that raises dies and the
launcher (torchrun) tears the job down: a crash, loud, not a hang (RC108, off by default)."""
import torch
import torch.distributed as dist

from data import load_step_batch


def train(model, optimizer, shard_dir: str, steps: int) -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    for step in range(steps):
        batch = load_step_batch(rank, step, shard_dir)
        loss = model(batch).sum()
        loss.backward()
        optimizer.step()
        dist.barrier()
