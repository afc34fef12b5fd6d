from .trainer import Trainer, TrainingArguments

__all__ = ["Trainer", "TrainingArguments"]
