"""An FSDP trainer's checkpoint helper calls model.state_dict() under `if rank == 0:`. With
FULL_STATE_DICT every rank must take part in the all-gather behind FSDP's state_dict()."""
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
            if self.rank == 0:
                torch.save(self.model.state_dict(), os.path.join(self.ckpt_dir, f"epoch{epoch}.pt"))  # expect: RC101
