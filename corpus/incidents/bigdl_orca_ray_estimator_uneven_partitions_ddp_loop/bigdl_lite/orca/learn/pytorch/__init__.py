from .estimator import Estimator
from .training_operator import TrainingOperator

__all__ = ["Estimator", "TrainingOperator"]
