from .trainer_voc import Trainer_base

__all__ = ["Trainer_base"]
