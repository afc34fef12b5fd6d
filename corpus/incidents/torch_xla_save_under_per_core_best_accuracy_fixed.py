"""The torch_xla classifier of pytorch/xla#2712 with the fix the maintainer's diagnosis calls for:
the validation accuracy is averaged over the cores (`xm.mesh_reduce`) before it is compared, so
every core takes the save branch together and meets the others in `xm.save`'s rendezvous.

Thread: https://github.com/pytorch/xla/issues/2712 ("xm.save() hangs inside epoch loop")
Project: pytorch/xla (the reporter's own training script on Kaggle TPUs)
What hung: the reporter: it "hangs here: `xm.save(model.state_dict(), os.path.join(best_file))`"
while the per-fold `xm.save` after the loop works. The maintainer's diagnosis: "`xm.save` has a
rendezvous in it. All cores must sync in this rendezvous, otherwise the processes will hang ...
`xm.save` is in an if statement, `if acc > acc_max` ... The validation dataset is sharded, because a
`valid_sampler` is being used. the `acc` value is different from one core to the next". The cores
whose shard improved waited in the rendezvous of `xm.save`; the others went on to the next epoch.
Fix: make the decision the same on every core: the accuracy is reduced across cores with
`xm.mesh_reduce` before it is compared, so every core takes the branch together and joins the
rendezvous (`xm.save` writes from the master ordinal only).
Expected rankcheck finding: none (safe twin).
(Inferred: the model, dataset and loss; the thread's pastebin is summarised, not copied. The fix
is written from the maintainer's diagnosis: the thread does not show the reporter's patched code.)
"""
import argparse
import os

import numpy as np
import pandas as pd
import timm
import torch
import torch.nn as nn
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_multiprocessing as xmp
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
from torchvision import transforms


class LeafDataset(Dataset):
    def __init__(self, frame, image_dir, transform):
        self.frame = frame.reset_index(drop=True)
        self.image_dir = image_dir
        self.transform = transform

    def __len__(self):
        return len(self.frame)

    def __getitem__(self, idx):
        row = self.frame.iloc[idx]
        image = Image.open(os.path.join(self.image_dir, row.image_id)).convert("RGB")
        return self.transform(image), int(row.label)


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--csv", default="train_folds.csv")
    parser.add_argument("--image-dir", default="train_images")
    parser.add_argument("--kernel-type", default="effnet_b3")
    parser.add_argument("--fold", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--image-size", type=int, default=512)
    parser.add_argument("--num-workers", type=int, default=4)
    return parser.parse_args()


def build_loaders(args):
    frame = pd.read_csv(args.csv)
    train_tf = transforms.Compose(
        [transforms.RandomResizedCrop(args.image_size), transforms.RandomHorizontalFlip(), transforms.ToTensor()]
    )
    valid_tf = transforms.Compose([transforms.Resize((args.image_size, args.image_size)), transforms.ToTensor()])
    train_ds = LeafDataset(frame[frame.fold != args.fold], args.image_dir, train_tf)
    valid_ds = LeafDataset(frame[frame.fold == args.fold], args.image_dir, valid_tf)
    train_sampler = DistributedSampler(
        train_ds, num_replicas=xm.xrt_world_size(), rank=xm.get_ordinal(), shuffle=True
    )
    valid_sampler = DistributedSampler(
        valid_ds, num_replicas=xm.xrt_world_size(), rank=xm.get_ordinal(), shuffle=False
    )
    train_loader = DataLoader(
        train_ds, batch_size=args.batch_size, sampler=train_sampler, num_workers=args.num_workers, drop_last=True
    )
    valid_loader = DataLoader(valid_ds, batch_size=args.batch_size, sampler=valid_sampler, num_workers=args.num_workers)
    return train_loader, valid_loader


def train_one_epoch(model, loader, optimizer, criterion, device):
    model.train()
    losses = []
    for images, labels in pl.ParallelLoader(loader, [device]).per_device_loader(device):
        optimizer.zero_grad()
        loss = criterion(model(images), labels)
        loss.backward()
        xm.optimizer_step(optimizer)
        losses.append(loss.item())
    return float(np.mean(losses))


def validate(model, loader, device):
    model.eval()
    correct, total = 0, 0
    with torch.no_grad():
        for images, labels in pl.ParallelLoader(loader, [device]).per_device_loader(device):
            preds = model(images).argmax(dim=1)
            correct += (preds == labels).sum().item()
            total += labels.numel()
    return correct / max(total, 1)


def train_model(args):
    device = xm.xla_device()
    train_loader, valid_loader = build_loaders(args)
    model = timm.create_model("tf_efficientnet_b3_ns", pretrained=True, num_classes=5).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr * xm.xrt_world_size())
    criterion = nn.CrossEntropyLoss()
    best_file = f"{args.kernel_type}_best_fold{args.fold}.pth"

    acc_max = 0.0
    for epoch in range(args.epochs):
        train_loss = train_one_epoch(model, train_loader, optimizer, criterion, device)
        acc = validate(model, valid_loader, device)
        acc = xm.mesh_reduce("valid_acc", acc, np.mean)
        xm.master_print(f"epoch {epoch} train_loss {train_loss:.4f} acc {acc:.4f}")
        if acc > acc_max:
            xm.master_print(f"acc improved ({acc_max:.4f} --> {acc:.4f}), saving model")
            xm.save(model.state_dict(), best_file)
            acc_max = acc

    xm.save(model.state_dict(), f"{args.kernel_type}_final_fold{args.fold}.pth")


def _mp_fn(index, args):
    torch.set_default_tensor_type("torch.FloatTensor")
    train_model(args)


if __name__ == "__main__":
    xmp.spawn(_mp_fn, args=(parse_args(),), nprocs=8, start_method="fork")
