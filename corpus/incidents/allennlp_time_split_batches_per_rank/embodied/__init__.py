"""Embodied-agent training code on AllenNLP: trajectory reader, recurrent policy, TBPTT trainer."""

from embodied.model import RecurrentPolicy
from embodied.trainer import TimeSplitTrainer
from embodied.trajectories import read_trajectories

__all__ = ["RecurrentPolicy", "TimeSplitTrainer", "read_trajectories"]
