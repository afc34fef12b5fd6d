"""A launcher-environment helper as training libraries write it: a dataclass whose fields default
to what the launcher exported, handed out by a classmethod singleton."""
import os
from dataclasses import dataclass
from typing import ClassVar, Optional

import torch.distributed as dist

read_env = os.environ.get


@dataclass()
class Launch:
    global_rank: int = int(read_env("RANK", "-1"))
    world_size: int = int(read_env("WORLD_SIZE", "1"))
    _instance: ClassVar[Optional["Launch"]] = None

    @classmethod
    def instance(cls) -> "Launch":
        if cls._instance is None:
            cls._instance = cls()
        return cls._instance

    @property
    def is_main(self) -> bool:
        return self.global_rank <= 0

    def barrier(self) -> None:
        if self.world_size > 1:
            dist.barrier()
