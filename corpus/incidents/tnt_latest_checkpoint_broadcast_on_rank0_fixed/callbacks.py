"""Safe twin of tnt_latest_checkpoint_broadcast_on_rank0: the rank-0-only callback uses the single
rank `_get_latest_checkpoint_path`, which issues no collective.

Thread: https://github.com/meta-pytorch/tnt/pull/936
"""
import shutil

import torch.distributed as dist
from torchtnt.framework.callback import Callback

from checkpoint_utils import _get_latest_checkpoint_path


class MirrorLatestCheckpoint(Callback):
    def __init__(self, dirpath: str, remote_dir: str, every_n_epochs: int = 1):
        self.dirpath = dirpath
        self.remote_dir = remote_dir
        self.every_n_epochs = every_n_epochs

    def on_train_epoch_end(self, state, unit) -> None:
        if unit.train_progress.num_epochs_completed % self.every_n_epochs != 0:
            return
        if dist.get_rank() == 0:
            latest = _get_latest_checkpoint_path(self.dirpath)
            if latest is not None:
                shutil.copytree(latest, f"{self.remote_dir}/{latest.rsplit('/', 1)[-1]}", dirs_exist_ok=True)
