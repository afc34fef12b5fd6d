"""Open-Sora-shaped training loop: the epoch's batches are walked with `next()` of an iterator over
`tqdm(enumerate(loader))` (the bar shown on rank 0 only), for a number of steps every rank was
told; the checkpoint barrier every `ckpt_every` steps tests the index `enumerate` handed out,
which is the same on every rank at the same step. (The look-alike,
rc101_step_counted_only_for_batches_with_a_loss.py, counts only some batches.)"""
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler
from tqdm import tqdm


def train_epoch(model, dataloader, num_steps: int, ckpt_every: int):
    pbar_iter = iter(tqdm(enumerate(dataloader), disable=dist.get_rank() != 0, total=num_steps))
    for _ in range(num_steps):
        step, batch = next(pbar_iter)
        model(batch).backward()
        if (step + 1) % ckpt_every == 0:
            dist.barrier()


def main(model, dataset):
    dist.init_process_group("gloo", timeout=__import__("datetime").timedelta(minutes=5))
    loader = DataLoader(dataset, batch_size=4, sampler=DistributedSampler(dataset), drop_last=True)
    train_epoch(model, loader, len(loader), 100)
