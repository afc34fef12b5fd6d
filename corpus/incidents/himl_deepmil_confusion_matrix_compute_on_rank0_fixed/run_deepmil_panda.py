"""DeepMIL slide-level ISUP grading on PANDA from pre-extracted tile features, trained with Lightning
DDP on one node, after microsoft/hi-ml#450: the confusion matrix figure that the global rank 0 writes
is computed with scikit-learn from the gathered results, not with the distributed metric.

Thread: https://github.com/microsoft/hi-ml/pull/450 ("BUG: Fix confusion matrix plots", merged as
a78c39f); the hang was first met in https://github.com/microsoft/hi-ml/pull/261, whose review says:
"calling `compute()` on the `ConfusioMatrix` metric triggers an `all_gather()` call; but because this
is running only on rank 0, the code hangs waiting for the other processes" (#261 then disabled the
plot with a TODO, which #450 resolved).
Project: microsoft/hi-ml (hi-ml-histopathology/src/histopathology/utils/output_utils.py,
plots_utils.py)
Fix (the PR, merged): the confusion matrix plot is computed with scikit-learn's `confusion_matrix`
from the gathered results (`results[TRUE_LABEL]`, `results[PRED_LABEL]`) instead of the distributed
metric, so nothing collective runs under the rank-0 branch.
Expected rankcheck finding: none (safe twin).
(Trimmed: tiles selection and slide thumbnails, the LightningContainer/AzureML runner, encoders.
Inferred: how the metric reaches the plots handler -- here through the metrics dict passed to
`_save_outputs`, as in the code #261 replaced; at #450's parent the handler held it in an attribute.)
"""
import argparse
from pathlib import Path
from typing import Dict, List

import pandas as pd
import torch
from pytorch_lightning import Trainer, seed_everything
from pytorch_lightning.callbacks import ModelCheckpoint
from torch.utils.data import DataLoader, Dataset

from histo_lite.models.deepmil import DeepMILModule
from histo_lite.utils.naming import MetricsKey, PlotOption
from histo_lite.utils.output_utils import DeepMILOutputsHandler

ISUP_CLASSES = ["ISUP 0", "ISUP 1", "ISUP 2", "ISUP 3", "ISUP 4", "ISUP 5"]


class PandaTileFeaturesDataset(Dataset):
    """One item per slide: the (n_tiles, d) features of its tiles, saved by the encoder pass."""

    def __init__(self, root: Path, split: str):
        self.root = root
        df = pd.read_csv(root / "slides.csv")
        self.slides = df[df["split"] == split].reset_index(drop=True)

    def __len__(self) -> int:
        return len(self.slides)

    def __getitem__(self, idx: int) -> Dict:
        row = self.slides.iloc[idx]
        features = torch.load(self.root / "features" / f"{row['image_id']}.pt")
        return {"slide_id": row["image_id"], "features": features, "label": torch.tensor(int(row["isup_grade"]))}


def collate_bags(items: List[Dict]) -> Dict:
    return {"slide_id": [it["slide_id"] for it in items], "features": [it["features"] for it in items],
            "label": [it["label"] for it in items]}


def parse_args():
    parser = argparse.ArgumentParser(description="DeepMIL on PANDA tile features")
    parser.add_argument("--root", type=Path, default=Path("/datasets/PANDA_tiles_features"))
    parser.add_argument("--outputs-root", type=Path, default=Path("outputs/deepmil_panda"))
    parser.add_argument("--devices", type=int, default=4)
    parser.add_argument("--max-epochs", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--num-workers", type=int, default=4)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--seed", type=int, default=42)
    return parser.parse_args()


def main():
    args = parse_args()
    seed_everything(args.seed, workers=True)
    outputs_handler = DeepMILOutputsHandler(
        outputs_root=args.outputs_root,
        n_classes=len(ISUP_CLASSES),
        class_names=ISUP_CLASSES,
        primary_val_metric=MetricsKey.AUROC,
        maximise=True,
        val_plot_options={PlotOption.HISTOGRAM, PlotOption.CONFUSION_MATRIX},
        test_plot_options={PlotOption.HISTOGRAM, PlotOption.CONFUSION_MATRIX},
    )
    module = DeepMILModule(n_classes=len(ISUP_CLASSES), lr=args.lr, class_names=ISUP_CLASSES,
                           outputs_handler=outputs_handler)

    def loader(split: str, shuffle: bool) -> DataLoader:
        return DataLoader(PandaTileFeaturesDataset(args.root, split), batch_size=args.batch_size, shuffle=shuffle,
                          num_workers=args.num_workers, collate_fn=collate_bags)

    trainer = Trainer(accelerator="gpu", devices=args.devices, strategy="ddp", max_epochs=args.max_epochs,
                      default_root_dir=str(args.outputs_root),
                      callbacks=[ModelCheckpoint(monitor="val/auroc", mode="max", save_last=True)])
    trainer.fit(module, train_dataloaders=loader("train", True), val_dataloaders=loader("val", False))
    trainer.test(module, dataloaders=loader("test", False), ckpt_path="best")


if __name__ == "__main__":
    main()
