"""Reconstruction of https://github.com/pytorch/pytorch/issues/44957

Project: pytorch/pytorch (nn.SyncBatchNorm under DistributedDataParallel).
What hung: a recurrent video model converted with SyncBatchNorm. On the first
frame of a clip (`self.iter == 0`) forward runs only modelA; on later frames it
runs modelA and then modelB, which contains batch-norm layers. Each rank walks
its own clips (videos of different lengths), so one rank can be on frame 0
while another is on frame N and enters modelB's SyncBatchNorm all-reduce that
the first never issues; training hangs "on any batch norm". SsnL: "Syncbn ... synchronizes (and thus waits)
across all ranks in the process group. All ranks must call this op the same
number of times."
The branch depends on per-rank data (clip position), not on the rank id; the
model internals and the frame stream (same number of steps on every rank,
clip boundaries at different steps) are inferred.
Fixed twin (reporter's fix): modelB is called on every frame; on the first
frame of a clip it gets a uniform class distribution as the previous output,
so every rank runs the same SyncBatchNorm sequence. No finding expected.
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, IterableDataset


def conv_bn(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class ModelA(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.body = nn.Sequential(conv_bn(3, 32), conv_bn(32, 64), nn.Conv2d(64, num_classes, 1))

    def forward(self, frame):
        return self.body(frame).softmax(dim=1)


class ModelB(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.fuse = nn.Sequential(conv_bn(2 * num_classes, 64), nn.Conv2d(64, num_classes, 1))

    def forward(self, current, previous):
        return self.fuse(torch.cat([current, previous], dim=1)).softmax(dim=1)


class RecurrentSegmenter(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.modelA = ModelA(num_classes)
        self.modelB = ModelB(num_classes)
        self.iter = 0
        self.prev = None

    def reset(self):
        self.iter = 0
        self.prev = None

    def forward(self, frame):
        stuff = self.modelA(frame)
        if self.iter != 0:
            prev = self.prev
        else:
            prev = torch.full_like(stuff, 1.0 / stuff.size(1))
        out = self.modelB(stuff, prev)
        self.prev = out.detach()
        self.iter += 1
        return out


class VideoFrameStream(IterableDataset):
    """Streams this rank's clips frame by frame, frames_per_rank frames in all."""

    def __init__(self, clips, frames_per_rank, rank, world_size):
        self.clips = clips[rank::world_size]
        self.frames_per_rank = frames_per_rank

    def __iter__(self):
        produced = 0
        while True:
            for frames, masks in self.clips:
                for t in range(frames.size(0)):
                    if produced == self.frames_per_rank:
                        return
                    yield frames[t], masks[t], t == 0
                    produced += 1


def main(clips):
    parser = argparse.ArgumentParser()
    parser.add_argument("--num_classes", type=int, default=8)
    parser.add_argument("--frames_per_rank", type=int, default=20000)
    parser.add_argument("--lr", type=float, default=1e-3)
    args = parser.parse_args()

    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)

    model = RecurrentSegmenter(args.num_classes)
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model).cuda(local_rank)
    model = DDP(model, device_ids=[local_rank], find_unused_parameters=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    criterion = nn.NLLLoss()

    stream = VideoFrameStream(clips, args.frames_per_rank, dist.get_rank(), dist.get_world_size())
    loader = DataLoader(stream, batch_size=1, num_workers=0)
    for frame, mask, new_clip in loader:
        if bool(new_clip):
            model.module.reset()
        out = model(frame.cuda(non_blocking=True))
        loss = criterion(torch.log(out + 1e-8), mask.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()
