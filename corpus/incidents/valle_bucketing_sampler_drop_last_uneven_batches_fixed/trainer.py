"""Safe twin of the VALL-E-style trainer: the loader's batch counts are equal across ranks
(datamodule.py drops the last partial batches), and the end-of-epoch barrier is gone.

Thread: https://github.com/lifeiteng/vall-e/pull/131
"""
import argparse
import logging

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.cuda.amp import GradScaler
from torch.nn.parallel import DistributedDataParallel as DDP

from datamodule import TtsDataModule
from valle_model import get_model, prepare_input


def get_parser():
    parser = argparse.ArgumentParser()
    parser.add_argument("--world-size", type=int, default=4)
    parser.add_argument("--master-port", type=int, default=12354)
    parser.add_argument("--num-epochs", type=int, default=20)
    parser.add_argument("--base-lr", type=float, default=0.05)
    TtsDataModule.add_arguments(parser)
    return parser


def train_one_epoch(params, model, optimizer, scaler, train_dl, epoch, rank, world_size):
    model.train()
    tot_loss = 0.0
    for batch_idx, batch in enumerate(train_dl):
        text_tokens, text_lens, audio_features, audio_lens = prepare_input(batch, rank)
        with torch.cuda.amp.autocast(dtype=torch.float16):
            _, loss, metrics = model(x=text_tokens, x_lens=text_lens, y=audio_features, y_lens=audio_lens)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        tot_loss += loss.detach().item()
        if batch_idx % 100 == 0 and rank == 0:
            logging.info(f"Epoch {epoch}, batch {batch_idx}, loss {tot_loss / (batch_idx + 1):.4f}")
    return tot_loss


def run(rank, world_size, args):
    dist.init_process_group("nccl", init_method=f"tcp://localhost:{args.master_port}",
                            rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    model = DDP(get_model(args).to(rank), device_ids=[rank], find_unused_parameters=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.base_lr)
    scaler = GradScaler()
    data = TtsDataModule(args)
    train_dl = data.train_dataloaders(data.train_cuts(), rank=rank, world_size=world_size)
    for epoch in range(1, args.num_epochs + 1):
        train_dl.sampler.set_epoch(epoch - 1)
        train_one_epoch(args, model, optimizer, scaler, train_dl, epoch, rank, world_size)
        if rank == 0:
            torch.save({"model": model.module.state_dict(), "epoch": epoch}, f"exp/epoch-{epoch}.pt")
    dist.destroy_process_group()


def main():
    args = get_parser().parse_args()
    mp.spawn(run, args=(args.world_size, args), nprocs=args.world_size, join=True)


if __name__ == "__main__":
    main()
