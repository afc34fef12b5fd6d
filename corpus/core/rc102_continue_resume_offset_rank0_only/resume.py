"""Resume bookkeeping: reads the step counter saved next to the checkpoint."""
import json
import os


def load_resume_step(ckpt_dir: str) -> int:
    meta = os.path.join(ckpt_dir, "meta.json")
    if not os.path.exists(meta):
        return 0
    with open(meta) as f:
        return int(json.load(f)["step"])
