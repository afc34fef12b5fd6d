"""LibriSpeech ASR data module of snowfall (snowfall/data/asr_datamodule.py and librispeech.py,
April 2021), trimmed: dynamic-size batches of lhotse cuts drawn by the samplers in lhotse_lite."""
import argparse
import logging
from functools import lru_cache
from pathlib import Path

from torch.utils.data import DataLoader

from lhotse import CutSet, load_manifest
from lhotse.dataset import CutConcatenate, CutMix, K2SpeechRecognitionDataset, SpecAugment
from snowfall.common import str2bool

from lhotse_lite import SingleCutSampler


class LibriSpeechAsrDataModule:
    def __init__(self, args: argparse.Namespace):
        self.args = args

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser):
        group = parser.add_argument_group(title='ASR data related options')
        group.add_argument('--feature-dir', type=Path, default=Path('exp/data'),
                           help='Path to directory with train/valid/test cuts.')
        group.add_argument('--max-duration', type=int, default=500.0,
                           help='Maximum pooled recordings duration (seconds) in a single batch.')
        group.add_argument('--concatenate-cuts', type=str2bool, default=True,
                           help='When enabled, utterances (cuts) will be concatenated to minimize padding.')
        group.add_argument('--duration-factor', type=float, default=1.0)
        group.add_argument('--gap', type=float, default=1.0)
        group.add_argument('--full-libri', type=str2bool, default=True,
                           help='When enabled, use 960h LibriSpeech.')

    @lru_cache()
    def train_cuts(self) -> CutSet:
        cuts_train = load_manifest(self.args.feature_dir / 'cuts_train-clean-100.json.gz')
        if self.args.full_libri:
            cuts_train = (
                cuts_train
                + load_manifest(self.args.feature_dir / 'cuts_train-clean-360.json.gz')
                + load_manifest(self.args.feature_dir / 'cuts_train-other-500.json.gz')
            )
        return cuts_train

    @lru_cache()
    def valid_cuts(self) -> CutSet:
        return (
            load_manifest(self.args.feature_dir / 'cuts_dev-clean.json.gz')
            + load_manifest(self.args.feature_dir / 'cuts_dev-other.json.gz')
        )

    def train_dataloaders(self) -> DataLoader:
        logging.info("About to get train cuts")
        cuts_train = self.train_cuts()
        cuts_musan = load_manifest(self.args.feature_dir / 'cuts_musan.json.gz')

        transforms = [CutMix(cuts=cuts_musan, prob=0.5, snr=(10, 20))]
        if self.args.concatenate_cuts:
            transforms = [CutConcatenate(duration_factor=self.args.duration_factor, gap=self.args.gap)] + transforms
        input_transforms = [
            SpecAugment(num_frame_masks=2, features_mask_size=27, num_feature_masks=2, frames_mask_size=100)
        ]
        train = K2SpeechRecognitionDataset(cuts_train, cut_transforms=transforms, input_transforms=input_transforms)

        logging.info('Using SingleCutSampler.')
        train_sampler = SingleCutSampler(
            cuts_train,
            max_duration=self.args.max_duration,
            shuffle=True,
        )
        logging.info("About to create train dataloader")
        return DataLoader(train, sampler=train_sampler, batch_size=None, num_workers=4)

    def valid_dataloaders(self) -> DataLoader:
        logging.info("About to get dev cuts")
        cuts_valid = self.valid_cuts()
        validate = K2SpeechRecognitionDataset(cuts_valid)
        valid_sampler = SingleCutSampler(cuts_valid, max_duration=self.args.max_duration)
        logging.info("About to create dev dataloader")
        return DataLoader(validate, sampler=valid_sampler, batch_size=None, num_workers=1)
