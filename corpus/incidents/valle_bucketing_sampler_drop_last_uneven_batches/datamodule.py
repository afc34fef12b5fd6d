"""Data module of a VALL-E-style TTS trainer (lhotse cuts, DynamicBucketingSampler), one DDP
process per GPU.

Thread: https://github.com/lifeiteng/vall-e/pull/131 ("Set ddp_sampler drop_last=True")
Project: lifeiteng/vall-e
What hung: with `--drop-last False` (the default) the DynamicBucketingSampler, built with the
process's rank and world size, hands the processes different numbers of duration-bucketed
batches at the end of an epoch (the PR calls it "a bug in lhotse", lhotse#695). The process that
runs out first leaves the epoch loop in trainer.py and waits in the end-of-epoch
`torch.distributed.barrier()`, while the others are still inside DDP's gradient all-reduce of
their next backward.
Fix (the merged PR, reviewed by the maintainers): build the train sampler with
`drop_last=True` (the maintainer asked to make it the default of `--drop-last` and to note that
it must be True when world_size > 1), and drop the barrier ("No need to use
torch.distributed.barrier()").
Expected rankcheck finding: RC103 on the epoch loop over the train loader (trainer.py).
Inferred: where the removed barrier sat (end of the epoch), the dataset/collater arguments.
"""
import argparse
from pathlib import Path

import torch
from lhotse import CutSet, load_manifest_lazy
from lhotse.dataset import DynamicBucketingSampler, SpeechSynthesisDataset
from lhotse.dataset.input_strategies import PrecomputedFeatures
from torch.utils.data import DataLoader


class TtsDataModule:
    def __init__(self, args: argparse.Namespace):
        self.args = args

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser):
        group = parser.add_argument_group("TTS data related options")
        group.add_argument("--manifest-dir", type=Path, default=Path("data/tokenized"))
        group.add_argument("--max-duration", type=float, default=40.0)
        group.add_argument("--num-buckets", type=int, default=10)
        group.add_argument("--shuffle", type=bool, default=True)
        group.add_argument("--drop-last", type=bool, default=False,
                           help="Whether to drop last batch. Used by sampler.")
        group.add_argument("--num-workers", type=int, default=8)

    def train_cuts(self) -> CutSet:
        return load_manifest_lazy(self.args.manifest_dir / "cuts_train.jsonl.gz")

    def train_dataloaders(self, cuts_train: CutSet, rank: int, world_size: int) -> DataLoader:
        dataset = SpeechSynthesisDataset(feature_input_strategy=PrecomputedFeatures(),
                                         return_cuts=True)
        sampler = DynamicBucketingSampler(
            cuts_train,
            max_duration=self.args.max_duration,
            shuffle=self.args.shuffle,
            num_buckets=self.args.num_buckets,
            drop_last=self.args.drop_last,
            rank=rank,
            world_size=world_size,
        )
        return DataLoader(dataset, sampler=sampler, batch_size=None,
                          num_workers=self.args.num_workers, persistent_workers=False)
