"""Checkpointer: the processes agree on the time-stamped directory with `ddp_broadcast`, which skips
the collective inside a main-process-only section (speechbrain#2404)."""
import os
import time

import torch

from distributed import ddp_broadcast, if_main_process


class Checkpointer:
    def __init__(self, checkpoints_dir: str, recoverables: dict):
        self.checkpoints_dir = checkpoints_dir
        self.recoverables = recoverables

    def _new_checkpoint_dirpath(self) -> str:
        return os.path.join(self.checkpoints_dir, time.strftime("CKPT+%Y-%m-%d+%H-%M-%S"))

    def save_checkpoint(self, meta=None, end_of_epoch=True):
        ckpt_dir = ddp_broadcast(self._new_checkpoint_dirpath(), src=0)
        os.makedirs(ckpt_dir, exist_ok=True)
        if if_main_process():
            for name, obj in self.recoverables.items():
                torch.save(obj.state_dict(), os.path.join(ckpt_dir, f"{name}.ckpt"))
            torch.save(meta or {}, os.path.join(ckpt_dir, "CKPT.meta"))
        return ckpt_dir

    def delete_checkpoints(self, max_keys, num_to_keep: int = 1):
        names = sorted(os.listdir(self.checkpoints_dir))
        for name in names[:-num_to_keep]:
            if if_main_process():
                for f in os.listdir(os.path.join(self.checkpoints_dir, name)):
                    os.remove(os.path.join(self.checkpoints_dir, name, f))

    def save_and_keep_only(self, meta=None, max_keys=None, num_to_keep: int = 1):
        self.save_checkpoint(meta=meta)
        self.delete_checkpoints(max_keys=max_keys, num_to_keep=num_to_keep)
