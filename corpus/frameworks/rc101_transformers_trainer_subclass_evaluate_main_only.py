"""A project Trainer subclass skips evaluation except on the main process (local_rank -1 or 0) and
calls super().evaluate() there; the evaluation loop gathers from every process."""
from transformers import Trainer


class MainOnlyEvalTrainer(Trainer):
    def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix: str = "eval"):
        if self.args.local_rank in (-1, 0):
            return super().evaluate(eval_dataset, ignore_keys, metric_key_prefix)  # expect: RC101
        return {}
