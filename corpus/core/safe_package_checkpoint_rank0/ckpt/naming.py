"""Checkpoint file names."""
import os


def checkpoint_path(out_dir: str, epoch: int) -> str:
    return os.path.join(out_dir, f"checkpoint-{epoch:04d}.pt")


def latest_link(out_dir: str) -> str:
    return os.path.join(out_dir, "latest.pt")
