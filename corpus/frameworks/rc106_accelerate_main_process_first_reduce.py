"""A collective inside `accelerator.main_process_first()`: the main process runs the block while the
others wait in wait_for_everyone(), so its `accelerator.reduce` of the local example count meets
their barrier and never completes (accelerate's PartialState._goes_first puts the release after
the block). Look-alike: safe_accelerate_main_process_first.py (no collective in the block).
"""
import torch
from accelerate import Accelerator


def count_examples(accelerator, texts):
    with accelerator.main_process_first():  # expect: RC106
        kept = [t for t in texts if len(t) > 8]
        total = accelerator.reduce(torch.tensor([len(kept)], device=accelerator.device), reduction="sum")
    return kept, int(total.item())


def main():
    accelerator = Accelerator()
    kept, total = count_examples(accelerator, ["a short one", "tiny", "another long enough text"])
    accelerator.print(f"{total} examples kept")


if __name__ == "__main__":
    main()
