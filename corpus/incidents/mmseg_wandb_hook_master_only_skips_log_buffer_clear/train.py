"""Distributed training entry point of the segmentation codebase (as tools/train.py, launched with
`tools/dist_train.sh configs/deeplabv3plus/deeplabv3plus_r50-d8_512x1024_80k_cityscapes.py 2`), with
the text logger and the W&B hook in `log_config`, in that order."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from mmcv_lite.logger_hooks import TextLoggerHook
from mmcv_lite.runner import IterBasedRunner
from mmseg_hooks.wandblogger_hook import MMSegWandbHook


class SegDDP(DistributedDataParallel):
    """DDP wrapper with the segmentor's `train_step` (forward, then losses averaged over ranks)."""

    def train_step(self, data_batch, optimizer):
        img, gt_semantic_seg = data_batch
        loss = F.cross_entropy(self(img.cuda()), gt_semantic_seg.cuda(), ignore_index=255)
        log_vars = {"decode.loss_ce": loss.detach().clone()}
        for name, value in log_vars.items():
            dist.all_reduce(value.div_(dist.get_world_size()))  # _parse_losses
            log_vars[name] = value.item()
        return dict(loss=loss, log_vars=log_vars, num_samples=len(img))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--work-dir", default="work_dirs/deeplabv3plus_r50b-d8_512x1024_80k_cityscapes")
    parser.add_argument("--max-iters", type=int, default=80000)
    parser.add_argument("--log-interval", type=int, default=50)
    args = parser.parse_args()

    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)

    dataset = TensorDataset(torch.randn(2975, 3, 128, 256), torch.randint(0, 19, (2975, 128, 256)))
    loader = DataLoader(dataset, batch_size=2, sampler=DistributedSampler(dataset), drop_last=True)
    segmentor = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.SyncBatchNorm(64), nn.ReLU(), nn.Conv2d(64, 19, 1))
    model = SegDDP(segmentor.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)

    runner = IterBasedRunner(model, optimizer, args.work_dir, args.max_iters)
    runner.register_logger_hooks(dict(
        interval=args.log_interval,
        hooks=[TextLoggerHook(), MMSegWandbHook(init_kwargs={"project": "mmseg-cityscapes"})],
    ))
    runner.run(loader)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
