"""Safe twin of valle_bucketing_sampler_drop_last_uneven_batches/datamodule.py: the train
sampler drops the last partial batches (`--drop-last` now defaults to True, as the maintainers
asked), so every process yields the same number of bucketed batches per epoch.

Thread: https://github.com/lifeiteng/vall-e/pull/131
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
        group.add_argument("--drop-last", type=bool, default=True,
                           help="Whether to drop last batch. Used by sampler. "
                                "Must be True when world_size > 1, otherwise the ranks get "
                                "different numbers of batches.")
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
            # world_size > 1 needs drop_last=True: equal batch counts on every rank
            drop_last=True if world_size > 1 else self.args.drop_last,
            rank=rank,
            world_size=world_size,
        )
        return DataLoader(dataset, sampler=sampler, batch_size=None,
                          num_workers=self.args.num_workers, persistent_workers=False)
