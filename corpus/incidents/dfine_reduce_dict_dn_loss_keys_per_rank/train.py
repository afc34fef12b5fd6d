"""D-FINE object detector trained on a custom COCO-format dataset with many background (unannotated) images,
on several GPUs with DDP: `torchrun --nproc_per_node 4 train.py --img-folder data/images --ann-file
data/train.json`.

Thread: https://github.com/Peterande/D-FINE/issues/247 ("Deadlock in reduce_dict when targets are empty on some
ranks", open; a reporter's diagnosis with a reproduction and a patch)
Project: Peterande/D-FINE (src/solver/det_engine.py train_one_epoch, src/misc/dist_utils.py reduce_dict,
src/zoo/dfine/denoising.py, src/zoo/dfine/dfine_criterion.py)
What hung: "In get_contrastive_denoising_training_group(), if max_gt_num == 0, the function returns None, skipping
DN-related computation", so a rank whose batch has no annotation "produces a smaller loss dict". `reduce_dict`
stacks the values of the loss dict in sorted key order and all-reduces the stacked tensor: its length is the
number of loss keys of this rank (3 without denoising losses, 6 with them here), and the ranks block in
`torch.distributed.all_reduce()` on tensors of different sizes ("This causes a mismatch in the keys being reduced
across ranks, leading to a deadlock").
Fix (the reporter's patch): make the criterion return every DN loss key on every rank, as a zero when the batch
built no denoising queries, so the loss dicts (and the stacked tensors) have the same keys and length everywhere.
The same fix was later proposed for D-FINE's descendant DEIMv2 (Intellindust-AI-Lab/DEIMv2#136, "Synchronize keys
... before all_reduce, filling missing keys with zeros").
Expected rankcheck finding: RC104 on `torch.distributed.all_reduce(values)` in `reduce_dict`
(dfine_lite/dist_utils.py), whose tensor is stacked from a loss dict whose keys depend on this rank's targets
(`DFINECriterion.forward` in dfine_lite/criterion.py, called from `train_one_epoch` in dfine_lite/engine.py).
Inferred: the model is a small DETR-style stand-in for D-FINE's HGNetv2 + fine-grained decoder (no auxiliary
layers, no FGL/DDF losses), the matcher and losses are simplified, and `find_unused_parameters=True` is set so
that DDP tolerates the unused denoising embedding and the first collective to diverge is `reduce_dict`, as the
thread reports (D-FINE's runtime.yml defaults it to False).
"""
import argparse
import os

import torch
from torch.utils.data import DataLoader, DistributedSampler

from dfine_lite import dist_utils
from dfine_lite.criterion import DFINECriterion
from dfine_lite.data import CocoDetection, batch_image_collate_fn
from dfine_lite.engine import train_one_epoch
from dfine_lite.model import DFineLite


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--img-folder", required=True)
    parser.add_argument("--ann-file", required=True)
    parser.add_argument("--num-classes", type=int, default=80)
    parser.add_argument("--batch-size", type=int, default=4, help="per GPU")
    parser.add_argument("--epochs", type=int, default=72)
    parser.add_argument("--lr", type=float, default=2.5e-4)
    parser.add_argument("--use-amp", action="store_true")
    parser.add_argument("--output-dir", default="./output/dfine_custom")
    return parser.parse_args()


def main():
    args = parse_args()
    dist_utils.setup_distributed()
    device = torch.device("cuda", torch.cuda.current_device())
    if dist_utils.is_main_process():
        os.makedirs(args.output_dir, exist_ok=True)

    dataset = CocoDetection(args.img_folder, args.ann_file, remove_empty=False)
    sampler = DistributedSampler(dataset, shuffle=True)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, num_workers=4, drop_last=True,
                        collate_fn=batch_image_collate_fn)

    model = DFineLite(num_classes=args.num_classes).to(device)
    model = dist_utils.warp_model(model, sync_bn=True, find_unused_parameters=True)
    criterion = DFINECriterion(num_classes=args.num_classes)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    scaler = torch.cuda.amp.GradScaler() if args.use_amp else None

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        stats = train_one_epoch(model, criterion, loader, optimizer, device, epoch, scaler=scaler)
        if dist_utils.is_main_process():
            print(f"epoch {epoch}: {stats}")
        dist_utils.save_on_master({"model": model.module.state_dict(), "epoch": epoch},
                                  f"{args.output_dir}/last.pth")


if __name__ == "__main__":
    main()
