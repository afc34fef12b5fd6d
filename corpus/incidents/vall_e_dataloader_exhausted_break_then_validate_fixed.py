"""Safe twin of vall_e_dataloader_exhausted_break_then_validate.py: before every step the ranks
all-reduce a "my dataloader is exhausted" flag, and all of them leave the epoch together as soon as
any one of them has run out of batches, so the end-of-epoch validation all-reduce is reached in step.

Thread: https://github.com/lifeiteng/vall-e/pull/93 ("Fix MetricsTracker")
Project: lifeiteng/vall-e
Expected rankcheck finding: none.
"""
import argparse
import logging

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class MetricsTracker(dict):
    def __add__(self, other):
        out = MetricsTracker(self)
        for key, value in other.items():
            out[key] = out.get(key, 0.0) + value
        return out

    def reduce(self, device):
        keys = sorted(self.keys())
        values = torch.tensor([float(self[k]) for k in keys], device=device)
        dist.all_reduce(values, op=dist.ReduceOp.SUM)
        for key, value in zip(keys, values.tolist()):
            self[key] = value


def compute_loss(model, batch, device, is_training):
    with torch.set_grad_enabled(is_training):
        _, loss, _ = model(
            x=batch["text_tokens"].to(device),
            x_lens=batch["text_tokens_lens"].to(device),
            y=batch["audio_features"].to(device),
            y_lens=batch["audio_features_lens"].to(device),
        )
    info = MetricsTracker(frames=float(batch["audio_features_lens"].sum()), loss=loss.detach().item())
    return loss, info


def compute_validation_loss(model, valid_dl, device, world_size):
    model.eval()
    tot_loss = MetricsTracker()
    for batch in valid_dl:
        _, info = compute_loss(model, batch, device, is_training=False)
        tot_loss = tot_loss + info
    if world_size > 1:
        tot_loss.reduce(device)
    return tot_loss


def train_one_epoch(params, model, optimizer, scheduler, train_dl, valid_dl, device, world_size):
    def evaluate():
        logging.info("Computing validation loss")
        valid_info = compute_validation_loss(model, valid_dl, device, world_size)
        logging.info(f"Epoch {params.cur_epoch}, validation: {valid_info}")
        model.train()

    model.train()
    iter_dl = iter(train_dl)
    stop_iteration = torch.zeros((), dtype=torch.int64, device=device)
    while True:
        try:
            batch = next(iter_dl)
            stop_iteration.fill_(0)
        except StopIteration:
            batch = None
            stop_iteration.fill_(1)
        if world_size > 1:
            dist.all_reduce(stop_iteration, op=dist.ReduceOp.SUM)
        if stop_iteration.item() != 0:
            logging.info("Reaches end of dataloader (on at least one rank).")
            break
        params.batch_idx_train += 1
        loss, _ = compute_loss(model, batch, device, is_training=True)
        loss.backward()
        if params.batch_idx_train % params.accumulate_grad_steps == 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad()
            scheduler.step()
        if params.batch_idx_train % params.valid_interval == 0:
            evaluate()

    evaluate()  # valid every epoch


def run(rank, world_size, args, build_model, build_dataloaders):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    device = torch.device("cuda", rank)
    model = DDP(build_model(args).to(device), device_ids=[rank], find_unused_parameters=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.base_lr, betas=(0.9, 0.95))
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / args.warmup_steps))
    train_dl, valid_dl = build_dataloaders(args, rank, world_size)  # lhotse DynamicBucketingSampler per rank
    args.batch_idx_train = 0
    for epoch in range(args.start_epoch, args.num_epochs + 1):
        train_dl.sampler.set_epoch(epoch - 1)
        args.cur_epoch = epoch
        train_one_epoch(args, model, optimizer, scheduler, train_dl, valid_dl, device, world_size)


def get_parser():
    parser = argparse.ArgumentParser()
    parser.add_argument("--world-size", type=int, default=8)
    parser.add_argument("--max-duration", type=float, default=40.0)
    parser.add_argument("--base-lr", type=float, default=0.05)
    parser.add_argument("--warmup-steps", type=int, default=200)
    parser.add_argument("--accumulate-grad-steps", dest="accumulate_grad_steps", type=int, default=1)
    parser.add_argument("--valid-interval", dest="valid_interval", type=int, default=10000)
    parser.add_argument("--start-epoch", dest="start_epoch", type=int, default=1)
    parser.add_argument("--num-epochs", dest="num_epochs", type=int, default=20)
    return parser
