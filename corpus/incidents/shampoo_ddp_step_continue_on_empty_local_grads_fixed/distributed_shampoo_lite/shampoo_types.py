"""Configuration objects and state-list keys (trimmed from distributed_shampoo.shampoo_types)."""
import enum
from dataclasses import dataclass

import torch

DISTRIBUTOR = "distributor"
MASKED_BLOCKED_GRADS = "masked_blocked_grads"
MASKED_BLOCKED_PARAMS = "masked_blocked_params"
STEP = "step"
LR = "lr"
BETAS = "betas"
EPSILON = "epsilon"
WEIGHT_DECAY = "weight_decay"
PRECONDITION_FREQUENCY = "precondition_frequency"
START_PRECONDITIONING_STEP = "start_preconditioning_step"
PARAMS = "params"


class CommunicationDType(enum.Enum):
    DEFAULT = 0
    FP16 = 1
    BF16 = 2
    FP32 = 3


@dataclass
class DDPShampooConfig:
    """Each rank computes the root-inverse updates of its own blocks; the updated blocks are
    exchanged with an AllGather after every step."""

    communication_dtype: CommunicationDType = CommunicationDType.DEFAULT
    num_trainers_per_group: int = -1
    communicate_params: bool = False

    def torch_dtype(self) -> torch.dtype:
        return {CommunicationDType.BF16: torch.bfloat16, CommunicationDType.FP16: torch.float16}.get(
            self.communication_dtype, torch.float32
        )
