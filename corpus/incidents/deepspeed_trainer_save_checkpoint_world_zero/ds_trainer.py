"""Seq2seq Trainer subclass whose checkpoint hook saves the DeepSpeed engine state, written while
wiring DeepSpeed into the HF Trainer: the engine checkpoint is taken only on world process zero.

Thread: https://github.com/deepspeedai/DeepSpeed/pull/801 ("[save_checkpoint] document the requirement to call for all ranks")
Project: deepspeedai/DeepSpeed (the caller was the transformers Trainer / DeepSpeed integration, stas00)
What hung: `DeepSpeedEngine.save_checkpoint` synchronizes all ranks (it barriers, and under ZeRO every
rank writes its own optimizer partition). The author "unknowingly called it for rank 0" only; rank 0
waited inside save_checkpoint while ranks 1..n went on to the next training step's gradient
all-reduce, so the job hung (answered in DeepSpeed issue #797: all processes must call it).
Fix: call `save_checkpoint` on every process; only the rank-0 bookkeeping (trainer state json,
tokenizer/config files) stays under `is_world_process_zero()`; the PR documents the requirement.
Inferred: the exact shape of the `_save_checkpoint` override (a Trainer subclass) is a reconstruction;
the thread only states that the call was made for rank 0.
Expected rankcheck finding: RC101 on the `self.deepspeed.save_checkpoint(...)` call guarded by
`self.is_world_process_zero()`.
"""
import json
import os

from transformers import Seq2SeqTrainer
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR

TRAINER_STATE_NAME = "trainer_state.json"


class DeepSpeedSeq2SeqTrainer(Seq2SeqTrainer):
    """Trainer that delegates model/optimizer/scheduler checkpointing to the DeepSpeed engine."""

    def _rotate_checkpoints_if_needed(self, run_dir):
        if self.args.save_total_limit is None:
            return
        kept = sorted(d for d in os.listdir(run_dir) if d.startswith(PREFIX_CHECKPOINT_DIR))
        for stale in kept[: max(0, len(kept) - self.args.save_total_limit)]:
            self.log({"removed_checkpoint": stale})

    def _save_checkpoint(self, model, trial, metrics=None):
        checkpoint_folder = f"{PREFIX_CHECKPOINT_DIR}-{self.state.global_step}"
        run_dir = self.args.output_dir
        output_dir = os.path.join(run_dir, checkpoint_folder)

        if self.is_world_process_zero():
            os.makedirs(output_dir, exist_ok=True)
            self.save_model(output_dir)
            # engine state: fp16 master weights, optimizer partitions, lr scheduler
            self.deepspeed.save_checkpoint(output_dir)  # expect: RC101
            with open(os.path.join(output_dir, TRAINER_STATE_NAME), "w") as f:
                json.dump({"global_step": self.state.global_step, "metrics": metrics}, f)
            self._rotate_checkpoints_if_needed(run_dir)
