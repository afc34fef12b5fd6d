"""voxel2clip training (MedARC fMRI-reconstruction-NSD): an MLP maps NSD fMRI voxels to CLIP image
embeddings with a contrastive loss. Under DDP the training losses gather the CLIP targets of every
rank (`utils.mixco_nce` / `utils.soft_clip_loss` with `distributed=True`, which all-gather through
`torch.distributed.nn.all_gather`). Validation runs on local rank 0 only, through the unwrapped
model, and the epoch ends with a `dist.barrier()`.

Thread: https://github.com/MedARC-AI/fMRI-reconstruction-NSD/pull/9 ("Fix DDP hang in voxel2clip and
support using test set as validation", merged; commit 712bbbd "Fix hang in mixco with DDP")
Project: MedARC-AI/fMRI-reconstruction-NSD (src/train_voxel2clip.py, src/utils.py)
What hung: "Fix a bug where voxel2clip hangs inside mixco loss when using DDP during validation".
The validation block sits under `if local_rank==0:` but passes `distributed=distributed` to the
loss helpers, so rank 0 enters the all_gather inside `gather_features` while the other ranks have
gone on to the end-of-epoch `dist.barrier()`.
Fix: the validation losses are computed with `distributed=False` ("always false otherwise DDP hangs
here"); validation stays on local rank 0.
Expected rankcheck finding: RC101 on the two validation loss calls under `if local_rank == 0:`
(`utils.mixco_nce(...)` and `utils.soft_clip_loss(...)`), which reach the all_gather in
`utils.gather_features` on rank 0 alone.
Inferred: the data pipeline (webdataset shards in the project) is replaced by synthetic tensors,
the CLIP embedder by a small frozen encoder, and the script's configurator globals by argparse.
"""
import argparse
import os

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

import ddp_config
import utils
from models import BrainNetwork, Clipper


def get_dataloaders(args, distributed):
    g = torch.Generator().manual_seed(0)
    train = TensorDataset(torch.randn(args.num_train, args.num_voxels, generator=g), torch.rand(args.num_train, 3, 64, 64, generator=g))
    val = TensorDataset(torch.randn(args.num_val, args.num_voxels, generator=g), torch.rand(args.num_val, 3, 64, 64, generator=g))
    sampler = DistributedSampler(train, shuffle=True, drop_last=True) if distributed else None
    train_dl = DataLoader(train, batch_size=args.batch_size, sampler=sampler, shuffle=sampler is None, drop_last=True)
    val_dl = DataLoader(val, batch_size=args.val_batch_size, shuffle=False)
    return train_dl, val_dl, sampler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--num_epochs", type=int, default=120)
    parser.add_argument("--batch_size", type=int, default=300)
    parser.add_argument("--val_batch_size", type=int, default=300)
    parser.add_argument("--num_voxels", type=int, default=15724)
    parser.add_argument("--num_train", type=int, default=24000)
    parser.add_argument("--num_val", type=int, default=900)
    parser.add_argument("--max_lr", type=float, default=3e-4)
    parser.add_argument("--mixup_pct", type=float, default=0.5)
    parser.add_argument("--no_distributed", action="store_true")
    parser.add_argument("--outdir", default="../train_logs/models/voxel2clip/test")
    args = parser.parse_args()
    distributed = not args.no_distributed

    os.makedirs(args.outdir, exist_ok=True)
    if distributed:
        _, local_rank, device = ddp_config.set_ddp()
    else:
        local_rank, device = 0, torch.device("cuda:0")

    clip_extractor = Clipper(device=device)
    voxel2clip = BrainNetwork(in_dim=args.num_voxels).to(device)
    if distributed:
        voxel2clip = nn.SyncBatchNorm.convert_sync_batchnorm(voxel2clip)
        voxel2clip = DDP(voxel2clip, device_ids=[local_rank])

    train_dl, val_dl, sampler = get_dataloaders(args, distributed)
    optimizer = torch.optim.AdamW(voxel2clip.parameters(), lr=5e-4, weight_decay=1e-2)
    lr_scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=args.max_lr, total_steps=args.num_epochs * len(train_dl), pct_start=2 / args.num_epochs
    )
    utils.seed_everything(local_rank)

    mixup_epochs = int(args.mixup_pct * args.num_epochs)
    soft_loss_temps = utils.cosine_anneal(0.004, 0.0075, args.num_epochs - mixup_epochs)
    losses, val_losses = [], []
    best_val_loss = 1e9

    for epoch in range(args.num_epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        voxel2clip.train()
        for train_i, (voxel, image) in enumerate(train_dl):
            optimizer.zero_grad()
            voxel, image = voxel.to(device), image.to(device)
            if epoch < mixup_epochs:
                voxel, perm, betas, select = utils.mixco(voxel)
            clip_target = clip_extractor.embed_image(image).float()
            clip_voxels = voxel2clip(voxel)
            if epoch < mixup_epochs:
                loss = utils.mixco_nce(F.normalize(clip_voxels, dim=-1), F.normalize(clip_target, dim=-1), temp=0.006,
                                       perm=perm, betas=betas, select=select, distributed=distributed, local_rank=local_rank)
            else:
                temp = float(soft_loss_temps[epoch - mixup_epochs])
                loss = utils.soft_clip_loss(F.normalize(clip_voxels, dim=-1), F.normalize(clip_target, dim=-1), temp=temp, distributed=distributed)
            loss.backward()
            optimizer.step()
            lr_scheduler.step()
            losses.append(loss.item())

        if local_rank == 0:
            voxel2clip.eval()
            val_fwd = 0.0
            for val_i, (voxel, image) in enumerate(val_dl):
                with torch.no_grad():
                    voxel, image = voxel.to(device), image.to(device)
                    clip_target = clip_extractor.embed_image(image).float()
                    clip_voxels = voxel2clip.module(voxel) if distributed else voxel2clip(voxel)
                    labels = torch.arange(len(clip_target), device=device)
                    if epoch < mixup_epochs:
                        loss = utils.mixco_nce(F.normalize(clip_voxels, dim=-1), F.normalize(clip_target, dim=-1), temp=0.006, distributed=distributed)  # expect: RC101
                    else:
                        temp = float(soft_loss_temps[epoch - mixup_epochs])
                        loss = utils.soft_clip_loss(F.normalize(clip_voxels, dim=-1), F.normalize(clip_target, dim=-1), temp=temp, distributed=distributed)  # expect: RC101
                    val_losses.append(loss.item())
                    val_fwd += utils.topk(utils.batchwise_cosine_similarity(clip_target, clip_voxels), labels, k=1)

            val_loss = float(np.mean(val_losses[-(val_i + 1):]))
            print(f"epoch {epoch}: train {np.mean(losses[-(train_i + 1):]):.4f} val {val_loss:.4f} "
                  f"val_fwd_pct_correct {val_fwd / (val_i + 1):.3f}")
            if val_loss < best_val_loss:
                best_val_loss = val_loss
                utils.save_ckpt(voxel2clip, optimizer, losses, val_losses, epoch, "best", args.outdir)

        if distributed:
            dist.barrier()

    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
