"""A trimmed copy of TRL's ORPO trainer (trl/trainer/orpo_trainer.py at 4871c82) and its padding collator."""

from orpo_lite.collator import DPODataCollatorWithPadding
from orpo_lite.trainer import ORPOConfig, ORPOTrainer

__all__ = ["DPODataCollatorWithPadding", "ORPOConfig", "ORPOTrainer"]
