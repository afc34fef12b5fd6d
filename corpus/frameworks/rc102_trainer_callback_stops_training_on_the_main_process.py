"""A Hugging Face Trainer callback that stops training when a file appears, looked for on the main
process only: the Trainer's loop breaks on that process after the step, unreduced, while the
others start the next step and wait in its gradient all-reduce. (The look-alike stops at a step
count every process reaches together.)"""
import os

from transformers import TrainerCallback


class StopWhenRequested(TrainerCallback):
    def __init__(self, stop_file: str = "STOP"):
        self.stop_file = stop_file

    def on_step_end(self, args, state, control, **kwargs):
        if state.is_world_process_zero and os.path.exists(os.path.join(args.output_dir, self.stop_file)):
            control.should_training_stop = True  # expect: RC102
        return control
