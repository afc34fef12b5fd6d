"""Framework calls that create (or configure) the process group without a timeout: deepspeed's
init_distributed, accelerate's kwargs handler, a Lightning strategy the user builds."""
import deepspeed
from accelerate import Accelerator
from accelerate.utils import InitProcessGroupKwargs
from lightning.pytorch import Trainer
from lightning.pytorch.strategies import DDPStrategy


def main():
    deepspeed.init_distributed(dist_backend="nccl")  # expect: RC201
    handler = InitProcessGroupKwargs(backend="nccl")  # expect: RC201
    handler.backend = "gloo"
    accelerator = Accelerator(kwargs_handlers=[handler])
    trainer = Trainer(strategy=DDPStrategy(find_unused_parameters=True))  # expect: RC201
    return accelerator, trainer
