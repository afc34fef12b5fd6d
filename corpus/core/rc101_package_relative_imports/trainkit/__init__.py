"""trainkit: a tiny training toolkit; re-exports the public helpers."""
from .reporting import log_epoch
from .reduce import mean_over_ranks

__all__ = ["log_epoch", "mean_over_ranks"]
