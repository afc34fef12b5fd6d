"""The fix: evaluate on every process and keep only the extra logging for process zero."""
from transformers import Trainer


class LoggingEvalTrainer(Trainer):
    def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix: str = "eval"):
        metrics = super().evaluate(eval_dataset, ignore_keys, metric_key_prefix)
        if self.is_world_process_zero():
            print({k: round(v, 4) for k, v in metrics.items() if isinstance(v, float)})
        return metrics
