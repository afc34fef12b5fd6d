"""The FSDP tutorial's form: every rank calls state_dict() under FULL_STATE_DICT (rank0_only gives
the tensors to rank 0), and only rank 0 writes the file."""
import functools
import os

import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import FullStateDictConfig, StateDictType
from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy


class Trainer:
    def __init__(self, model: torch.nn.Module, block_cls, ckpt_dir: str) -> None:
        self.rank = dist.get_rank()
        policy = functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={block_cls})
        self.model = FSDP(model, auto_wrap_policy=policy, device_id=torch.cuda.current_device())
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=1e-4)
        self.ckpt_dir = ckpt_dir

    def save_checkpoint(self, epoch: int) -> None:
        cfg = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
        with FSDP.state_dict_type(self.model, StateDictType.FULL_STATE_DICT, cfg):
            cpu_state = self.model.state_dict()
        if self.rank == 0:
            torch.save(cpu_state, os.path.join(self.ckpt_dir, f"epoch{epoch}.pt"))
