"""The look-alike of rc102_trainer_callback_stops_training_on_the_main_process: the callback stops
at a step budget, which every process counts alike, and only the main process says so."""
from transformers import TrainerCallback


class StopAtBudget(TrainerCallback):
    def __init__(self, max_steps: int):
        self.max_steps = max_steps

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step >= self.max_steps:
            control.should_training_stop = True
            if state.is_world_process_zero:
                print(f"stopping at step {state.global_step}")
        return control
