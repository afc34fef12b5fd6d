"""`accelerator.wait_for_everyone()` inside `main_process_first()`: a barrier out of turn meets the
others' barrier, so every process gets through; the collectives that would hang (a reduce, a
gather) are outside the block. Look-alike of rc106_accelerate_main_process_first_reduce.py."""
import torch
from accelerate import Accelerator


def count_examples(accelerator, texts):
    with accelerator.main_process_first():
        kept = [t for t in texts if len(t) > 8]
        accelerator.wait_for_everyone()
    total = accelerator.reduce(torch.tensor([len(kept)], device=accelerator.device), reduction="sum")
    return kept, int(total.item())
