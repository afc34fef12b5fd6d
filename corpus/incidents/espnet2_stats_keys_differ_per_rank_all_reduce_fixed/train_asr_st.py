"""Safe twin of espnet2_stats_keys_differ_per_rank_all_reduce: the stats are averaged across
ranks with one `all_gather_list` of the whole dict (the fix proposed in espnet/espnet#2545), so a
rank whose batch has no translation targets still issues exactly the same collectives.
"""
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from espnet2_lite.train.trainer import Trainer, TrainerOptions
from asr_st_model import ASRSTModel, build_dataset, collate


def get_parser():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train_data", required=True)
    parser.add_argument("--valid_data", required=True)
    parser.add_argument("--token_list", required=True)
    parser.add_argument("--st_token_list", required=True)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--max_epoch", type=int, default=40)
    parser.add_argument("--accum_grad", type=int, default=1)
    parser.add_argument("--grad_clip", type=float, default=5.0)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--st_weight", type=float, default=0.5)
    parser.add_argument("--output_dir", default="exp/asr_st")
    parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
    return parser


def main():
    args = get_parser().parse_args()
    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    if distributed:
        dist.init_process_group("nccl")
        torch.cuda.set_device(args.local_rank)
    device = torch.device("cuda", args.local_rank)

    model = ASRSTModel(args.token_list, args.st_token_list, st_weight=args.st_weight).to(device)
    if distributed:
        model = DistributedDataParallel(model, device_ids=[args.local_rank], find_unused_parameters=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    train_set = build_dataset(args.train_data)
    sampler = DistributedSampler(train_set) if distributed else None
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler,
                              shuffle=sampler is None, collate_fn=collate, drop_last=True)

    options = TrainerOptions(
        ngpu=1, accum_grad=args.accum_grad, grad_clip=args.grad_clip,
        distributed=distributed, output_dir=args.output_dir,
    )
    for epoch in range(1, args.max_epoch + 1):
        if sampler is not None:
            sampler.set_epoch(epoch)
        Trainer.train_one_epoch(model, train_loader, optimizer, options, device)
        if not distributed or dist.get_rank() == 0:
            os.makedirs(args.output_dir, exist_ok=True)
            torch.save(model.state_dict(), os.path.join(args.output_dir, f"{epoch}epoch.pth"))


if __name__ == "__main__":
    main()
