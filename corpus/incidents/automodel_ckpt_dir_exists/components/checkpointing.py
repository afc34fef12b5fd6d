"""Distributed checkpointer (trimmed from nemo_automodel/components/checkpoint).

Part of the reconstruction of https://github.com/NVIDIA-NeMo/Automodel/issues/3254;
see recipes/base_recipe.py. Model and optimizer state are written with
torch.distributed.checkpoint, which plans the save collectively across ranks.
"""
import os
from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_model_state_dict,
    get_optimizer_state_dict,
    set_model_state_dict,
    set_optimizer_state_dict,
)


@dataclass
class CheckpointingConfig:
    enabled: bool = True
    checkpoint_dir: str = "checkpoints/"
    model_save_format: str = "torch_save"
    save_consolidated: bool = False


class Checkpointer:
    def __init__(self, config: CheckpointingConfig, process_group=None):
        self.config = config
        self.process_group = process_group

    def save_model(self, model, path):
        model_dir = os.path.join(path, "model")
        state_dict = get_model_state_dict(model, options=StateDictOptions(full_state_dict=False))
        dcp.save(state_dict, checkpoint_id=model_dir, process_group=self.process_group)

    def save_optimizer(self, optimizer, model, path):
        optim_dir = os.path.join(path, "optim")
        state_dict = get_optimizer_state_dict(model, optimizer)
        dcp.save(state_dict, checkpoint_id=optim_dir, process_group=self.process_group)

    def save_on_dp_ranks(self, obj, name, path):
        state_dir = os.path.join(path, name)
        rank = dist.get_rank(self.process_group)
        os.makedirs(state_dir, exist_ok=True)
        torch.save(obj.state_dict(), os.path.join(state_dir, f"{name}_rank{rank}.pt"))

    def load_model(self, model, path):
        state_dict = get_model_state_dict(model)
        dcp.load(state_dict, checkpoint_id=os.path.join(path, "model"), process_group=self.process_group)
        set_model_state_dict(model, state_dict)

    def load_optimizer(self, optimizer, model, path):
        state_dict = get_optimizer_state_dict(model, optimizer)
        dcp.load(state_dict, checkpoint_id=os.path.join(path, "optim"), process_group=self.process_group)
        set_optimizer_state_dict(model, optimizer, state_dict)
