"""Trimmed ColossalAI parallel modes (colossalai/context/parallel_mode.py)."""
from enum import Enum


class ParallelMode(Enum):
    GLOBAL = "global"
    DATA = "data"
    PIPELINE = "pipe"
    TENSOR = "tensor"
    # the model-parallel group spans the pipeline and tensor groups of one data-parallel replica
    MODEL = "model"
