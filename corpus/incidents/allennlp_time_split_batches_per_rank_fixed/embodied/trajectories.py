"""Trajectory instances (variable-length episodes) and the time-dimension splitter used by the trainer."""

import json
import math
from typing import Dict, List

import torch
from allennlp.data import Instance
from allennlp.data.fields import TensorField

TensorDict = Dict[str, torch.Tensor]


def read_trajectories(path: str) -> List[Instance]:
    """One instance per episode: observation features, expert actions and a step mask."""
    instances = []
    with open(path) as f:
        for line in f:
            episode = json.loads(line)
            observations = torch.tensor(episode["observations"], dtype=torch.float)
            actions = torch.tensor(episode["actions"], dtype=torch.long)
            instances.append(
                Instance(
                    {
                        "observations": TensorField(observations, padding_value=0.0),
                        "actions": TensorField(actions, padding_value=-1, dtype=torch.long),
                        "mask": TensorField(torch.ones(len(actions), dtype=torch.bool), padding_value=False,
                                            dtype=torch.bool),
                    }
                )
            )
    return instances


def split_batch_along_time(batch: TensorDict, max_steps: int) -> List[TensorDict]:
    """Cut a padded batch of episodes into consecutive windows of `max_steps` time steps.

    The batch is padded to its longest episode, so the number of windows is
    ceil(longest episode in this batch / max_steps): it depends on which episodes this worker drew.
    """
    longest = int(batch["mask"].sum(dim=1).max().item())
    num_splits = max(1, math.ceil(longest / max_steps))
    splits = []
    for i in range(num_splits):
        window = slice(i * max_steps, (i + 1) * max_steps)
        splits.append({key: value[:, window] for key, value in batch.items()})
    return splits
