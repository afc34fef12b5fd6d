"""Distributed sliding-window evaluation of a 3D UNet on NIfTI volumes with MONAI, following the
MONAI tutorial acceleration/distributed_training/unet_evaluation_ddp.py, on an evaluation set whose
size is not a multiple of the number of GPUs (13 volumes on 8 GPUs), after the maintainer's answer
in MONAI#5357: the Dice metric is only accumulated inside the loop and aggregated once after it.

Thread: https://github.com/Project-MONAI/MONAI/issues/5357 ("Proper accuracy calculation on
multi-gpu with DistributedDataParallel with unevenly divisible data size")
Project: Project-MONAI/MONAI (monai.data.DistributedSampler, monai.metrics.DiceMetric)
Fix (the maintainer's): "You should not call `dice_metric.aggregate()` during the for loop. When
removed these 2 lines, every thing goes fine." Every rank reaches the single `aggregate()` after
its loop, which pads the uneven buffers for the all-gather and gives the mean over all 13 volumes.
Expected rankcheck finding: none (safe twin).
(Inferred: the synthetic volumes and the checkpoint name follow the tutorial, which the reporter
says the script is based on; the UNet has no buffers, so the DDP forward itself issues no
collective under `no_grad`.)
"""
import argparse
import os
from glob import glob

import nibabel as nib
import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

import monai
from monai.data import DataLoader, Dataset, DistributedSampler, create_test_image_3d, decollate_batch
from monai.inferers import sliding_window_inference
from monai.metrics import DiceMetric
from monai.transforms import Activations, AsDiscrete, Compose, EnsureChannelFirstd, LoadImaged, ScaleIntensityd


def evaluate(args):
    if args.local_rank == 0 and not os.path.exists(args.dir):
        # create random image, mask pairs for evaluation
        print(f"generating synthetic data to {args.dir} (this may take a while)")
        os.makedirs(args.dir)
        np.random.seed(seed=0)
        for i in range(args.num_images):
            im, seg = create_test_image_3d(128, 128, 128, num_seg_classes=1, channel_dim=-1)
            nib.save(nib.Nifti1Image(im, np.eye(4)), os.path.join(args.dir, f"img{i:d}.nii.gz"))
            nib.save(nib.Nifti1Image(seg, np.eye(4)), os.path.join(args.dir, f"seg{i:d}.nii.gz"))

    # initialize the distributed evaluation process, every GPU runs in a process
    dist.init_process_group(backend="nccl", init_method="env://")

    images = sorted(glob(os.path.join(args.dir, "img*.nii.gz")))
    segs = sorted(glob(os.path.join(args.dir, "seg*.nii.gz")))
    val_files = [{"img": img, "seg": seg} for img, seg in zip(images, segs)]

    val_transforms = Compose(
        [
            LoadImaged(keys=["img", "seg"]),
            EnsureChannelFirstd(keys=["img", "seg"], channel_dim=-1),
            ScaleIntensityd(keys="img"),
        ]
    )
    val_ds = Dataset(data=val_files, transform=val_transforms)
    # no padding: every volume is evaluated once, so the ranks get different numbers of volumes
    val_sampler = DistributedSampler(dataset=val_ds, even_divisible=False, shuffle=False)
    # sliding window inference need to input 1 image in every iteration
    val_loader = DataLoader(val_ds, batch_size=1, shuffle=False, num_workers=2, pin_memory=True, sampler=val_sampler)
    dice_metric = DiceMetric(include_background=True, reduction="mean", get_not_nans=False)
    post_trans = Compose([Activations(sigmoid=True), AsDiscrete(threshold=0.5)])

    device = torch.device(f"cuda:{args.local_rank}")
    torch.cuda.set_device(device)
    model = monai.networks.nets.UNet(
        spatial_dims=3,
        in_channels=1,
        out_channels=1,
        channels=(16, 32, 64, 128, 256),
        strides=(2, 2, 2, 2),
        num_res_units=2,
    ).to(device)
    model = DistributedDataParallel(model, device_ids=[device])
    map_location = {"cuda:0": f"cuda:{args.local_rank}"}
    model.load_state_dict(torch.load(args.checkpoint, map_location=map_location))
    model.eval()

    with torch.no_grad():
        for val_data in val_loader:
            val_images, val_labels = val_data["img"].to(device), val_data["seg"].to(device)
            roi_size = (96, 96, 96)
            sw_batch_size = 4
            val_outputs = sliding_window_inference(val_images, roi_size, sw_batch_size, model)
            val_outputs = [post_trans(o) for o in decollate_batch(val_outputs)]
            dice_metric(y_pred=val_outputs, y=val_labels)

        metric = dice_metric.aggregate().item()
        if dist.get_rank() == 0:
            print("evaluation metric:", metric)
        dice_metric.reset()

    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("-d", "--dir", default="./testdata", type=str, help="directory to create random data")
    parser.add_argument("--num_images", type=int, default=13)
    parser.add_argument("--checkpoint", default="final_model.pth")
    # must parse the command-line argument: ``--local_rank=LOCAL_PROCESS_RANK``, which will be provided by DDP
    parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
    args = parser.parse_args()
    evaluate(args=args)


if __name__ == "__main__":
    main()
