"""Callbacks of a torchtnt training app; one of them, run by rank 0 only, copies the newest
checkpoint to remote storage after each save.

Thread: https://github.com/meta-pytorch/tnt/pull/936 ("extract get_latest_checkpoint_path to a single rank function")
Project: meta-pytorch/tnt (torchtnt)
What hung: "`get_latest_checkpoint_path` broadcasts the path from rank 0 to other ranks. However,
there may be scenario where an operation involving checkpoint read + other actions is only done on
rank 0, in which case the broadcast will hang as other ranks never enter that logic."
Fix (the PR): "Write a `_get_latest_checkpoint_path` which is torch.distributed unaware" and call
that from rank-0-only code.
Expected rankcheck finding: RC101 on the rank-0-only `get_latest_checkpoint_path(...)` call, which
reaches `broadcast_object_list`.
"""
import shutil

import torch.distributed as dist
from torchtnt.framework.callback import Callback

from checkpoint_utils import get_latest_checkpoint_path


class MirrorLatestCheckpoint(Callback):
    def __init__(self, dirpath: str, remote_dir: str, every_n_epochs: int = 1):
        self.dirpath = dirpath
        self.remote_dir = remote_dir
        self.every_n_epochs = every_n_epochs

    def on_train_epoch_end(self, state, unit) -> None:
        if unit.train_progress.num_epochs_completed % self.every_n_epochs != 0:
            return
        if dist.get_rank() == 0:
            latest = get_latest_checkpoint_path(self.dirpath)  # expect: RC101
            if latest is not None:
                shutil.copytree(latest, f"{self.remote_dir}/{latest.rsplit('/', 1)[-1]}", dirs_exist_ok=True)
