"""save_checkpoint(): torch.save plus a 'latest' copy; touches only the local file system."""
import os
import shutil

import torch

from .naming import checkpoint_path, latest_link


def save_checkpoint(state: dict, out_dir: str, epoch: int) -> str:
    os.makedirs(out_dir, exist_ok=True)
    path = checkpoint_path(out_dir, epoch)
    torch.save(state, path)
    shutil.copyfile(path, latest_link(out_dir))
    return path
