"""Look-alikes of RC201 in framework code: the timeout is set through the kwargs handler or the
strategy (as a keyword, or on the handler after it is built: PixArt-alpha's training scripts set
`init_handler.timeout` on the next line), or the framework creates the group itself
(`Accelerator()`, `Trainer(strategy="ddp")`, `deepspeed.initialize`): not the user's line."""
from datetime import timedelta

import deepspeed
from accelerate import Accelerator
from accelerate.utils import InitProcessGroupKwargs
from lightning.pytorch import Trainer
from lightning.pytorch.strategies import DDPStrategy


def main(model, config):
    deepspeed.init_distributed(dist_backend="nccl", timeout=timedelta(minutes=3))
    accelerator = Accelerator(kwargs_handlers=[InitProcessGroupKwargs(timeout=timedelta(minutes=3))])
    plain = Accelerator()
    trainer = Trainer(strategy=DDPStrategy(timeout=timedelta(minutes=3)))
    default = Trainer(strategy="ddp")
    engine, _, _, _ = deepspeed.initialize(model=model, config=config)
    init_handler = InitProcessGroupKwargs()
    init_handler.timeout = timedelta(seconds=5400)
    later = Accelerator(kwargs_handlers=[init_handler])
    return accelerator, plain, trainer, default, engine, later
