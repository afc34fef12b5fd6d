"""Joint ASR + speech-translation training with an espnet2-style trainer under DDP
(`python -m torch.distributed.launch --nproc_per_node 4 train_asr_st.py ...`).

Thread: https://github.com/espnet/espnet/pull/2545 ("Use all_gather_list to all_gather stats",
labels Bugfix/distributed/ESPnet2; opened by the maintainer, kamo-naoyuki)
Project: espnet/espnet (espnet2 trainer, `espnet2/torch_utils/recursive_op.py`)
What hung: after every forward the trainer averages the model's `stats` dict across ranks with
`recursive_average`, which walks the dict and issues one `all_reduce` per value. "If stats has
different keys for each rank, the distributed training is failed": the model here only reports the
translation loss when the batch carries translation targets (`text_st is not None`), and the
trainer drops `None` entries before the reduction, so on a step where one rank's batch has no
translation pair that rank walks one key fewer and its sequence of all-reduces is shorter -- the
other ranks wait in the extra `all_reduce` (or pair differently named values) while it has gone on
to the DDP backward.
Fix (the PR): gather the whole stats dict once with `all_gather_list` (fairseq's pickled
all-gather) instead of an all_reduce per value, then average per key over the ranks that have it.
The PR was closed by its author rather than merged; the diagnosis and the proposed fix are the
maintainer's.
Expected rankcheck finding: RC103 on the dict comprehension in `recursive_sum`
(espnet2_lite/torch_utils/recursive_op.py), whose number of rounds -- and so of all_reduces --
follows this rank's key set.
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
