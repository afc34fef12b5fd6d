"""Safe twin of deepspeed_trainer_save_checkpoint_world_zero: the DeepSpeed engine checkpoint is
taken on every process; only the rank-0 bookkeeping stays under `is_world_process_zero()`.

Thread: https://github.com/deepspeedai/DeepSpeed/pull/801 ("[save_checkpoint] document the requirement to call for all ranks")
Project: deepspeedai/DeepSpeed
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

        self.save_model(output_dir)
        # engine state: every rank writes its own optimizer partition
        self.deepspeed.save_checkpoint(output_dir)
        if self.is_world_process_zero():
            with open(os.path.join(output_dir, TRAINER_STATE_NAME), "w") as f:
                json.dump({"global_step": self.state.global_step, "metrics": metrics}, f)
            self._rotate_checkpoints_if_needed(run_dir)
