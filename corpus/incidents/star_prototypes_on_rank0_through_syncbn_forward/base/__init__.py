from .base_trainer import BaseTrainer

__all__ = ["BaseTrainer"]
