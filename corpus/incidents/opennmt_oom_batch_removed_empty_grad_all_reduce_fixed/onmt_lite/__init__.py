"""A trimmed copy of the parts of OpenNMT-py 3.4 (OpenNMT/OpenNMT-py, onmt/*, January 2024) that a
data-parallel (`parallel_mode: data_parallel`) multi-GPU training run goes through: the trainer with
its gradient accumulation and OOM handling, and the hand-written gradient all-reduce of
onmt/utils/distributed.py."""
from onmt_lite.trainer import Trainer, build_trainer

__all__ = ["Trainer", "build_trainer"]
