from .naive_amp import NaiveAMPModel, NaiveAMPOptimizer

__all__ = ["NaiveAMPModel", "NaiveAMPOptimizer"]
