"""The look-alike of safe_step_handed_out_by_next_of_enumerate.py: the checkpoint barrier tests a
counter of this rank's own, advanced only for batches with a token to learn from, so the ranks reach a
multiple of `ckpt_every` at different steps."""
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def train_epoch(model, dataloader, num_steps: int, ckpt_every: int):
    it = iter(enumerate(dataloader))
    trained = 0
    for _ in range(num_steps):
        step, batch = next(it)
        if batch["loss_mask"].sum() > 0:
            model(batch).backward()
            trained += 1
        if trained % ckpt_every == 0:
            dist.barrier()  # expect: RC101


def main(model, dataset):
    dist.init_process_group("gloo", timeout=__import__("datetime").timedelta(minutes=5))
    loader = DataLoader(dataset, batch_size=4, sampler=DistributedSampler(dataset), drop_last=True)
    train_epoch(model, loader, len(loader), 100)
