"""Distributed evaluation of a 3D DenseNet121 classifier (IXI gender task) with ignite + MONAI:
one process per GPU (`torchrun --nproc_per_node=N evaluate_ddp.py`), every rank evaluates its own
slice of the validation images and the predictions are written to one CSV file.

Thread: https://github.com/Project-MONAI/MONAI/issues/2095 (notes in handlers/classification_saver.py)
"""
import argparse
import logging
import os
import sys
from glob import glob

import numpy as np
import torch
import torch.distributed as dist
from ignite.engine import Events, _prepare_batch, create_supervised_evaluator
from ignite.metrics import Accuracy
from monai.data import DataLoader, Dataset, DistributedSampler
from monai.handlers import CheckpointLoader, StatsHandler
from monai.networks.nets import DenseNet121
from monai.transforms import AddChanneld, Compose, LoadImaged, Resized, ScaleIntensityd, ToTensord

from handlers import ClassificationSaver


def parse_args():
    parser = argparse.ArgumentParser(description="DenseNet121 IXI evaluation (DDP)")
    parser.add_argument("--data-dir", default="./ixi_t1")
    parser.add_argument("--labels-file", default="./ixi_labels.npy")
    parser.add_argument("--checkpoint", default="./runs_dict/net_checkpoint_20.pt")
    parser.add_argument("--output-dir", default="./eval_out")
    parser.add_argument("--batch-size", type=int, default=2)
    return parser.parse_args()


def main():
    args = parse_args()
    logging.basicConfig(stream=sys.stdout, level=logging.INFO)
    dist.init_process_group(backend="nccl", init_method="env://")
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device(f"cuda:{local_rank}")
    torch.cuda.set_device(device)

    images = sorted(glob(os.path.join(args.data_dir, "*.nii.gz")))
    labels = np.load(args.labels_file).astype(np.int64)
    val_files = [{"img": img, "label": label} for img, label in zip(images, labels)]

    val_transforms = Compose([
        LoadImaged(keys=["img"]),
        AddChanneld(keys=["img"]),
        ScaleIntensityd(keys=["img"]),
        Resized(keys=["img"], spatial_size=(96, 96, 96)),
        ToTensord(keys=["img"]),
    ])
    val_ds = Dataset(data=val_files, transform=val_transforms)
    # no padding of the last rank's share: every image is evaluated exactly once
    val_sampler = DistributedSampler(val_ds, shuffle=False, even_divisible=False)
    val_loader = DataLoader(val_ds, batch_size=args.batch_size, num_workers=4, pin_memory=True,
                            sampler=val_sampler)

    # inference only: the bare network (no DDP wrapper, so no per-forward buffer broadcast)
    net = DenseNet121(spatial_dims=3, in_channels=1, out_channels=2).to(device)
    net.eval()

    def prepare_batch(batch, device=None, non_blocking=False):
        return _prepare_batch((batch["img"], batch["label"]), device, non_blocking)

    evaluator = create_supervised_evaluator(net, {"Accuracy": Accuracy()}, device, True,
                                            prepare_batch=prepare_batch)
    CheckpointLoader(load_path=args.checkpoint, load_dict={"net": net}).attach(evaluator)
    if dist.get_rank() == 0:
        StatsHandler(name="evaluator", output_transform=lambda x: None).attach(evaluator)
    ClassificationSaver(
        output_dir=args.output_dir,
        batch_transform=lambda batch: batch["img_meta_dict"],
        output_transform=lambda output: output[0].argmax(1),
    ).attach(evaluator)

    @evaluator.on(Events.COMPLETED)
    def log_done(engine):
        logging.info("rank %d evaluated %d iterations", dist.get_rank(), engine.state.iteration)

    evaluator.run(val_loader)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
