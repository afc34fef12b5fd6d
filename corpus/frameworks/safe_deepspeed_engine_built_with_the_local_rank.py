"""OpenRLHF's shape: a strategy object builds every engine with `deepspeed.initialize(args={
"local_rank": ...})`, and the trainer keeps an EMA copy only when one was asked for. Whether there is
an EMA model, and which parameters need gradients, are the same on every rank: the local rank the
engine was given does not make the engine, or what it holds, differ between ranks. Every rank
averages, so every rank enters ZeRO-3's GatheredParameters together."""
import os

import deepspeed


class DeepspeedStrategy:
    def __init__(self, stage: int):
        self.stage = stage

    def prepare(self, model, config):
        engine, _, _, _ = deepspeed.initialize(
            model=model,
            config=config,
            args={"local_rank": int(os.environ.get("LOCAL_RANK", "-1"))},
            dist_init_required=True,
        )
        return engine

    def moving_average(self, model, model_ema, beta=0.992):
        for param, param_ema in zip(model.parameters(), model_ema.parameters()):
            if param.requires_grad:
                with deepspeed.zero.GatheredParameters([param, param_ema], enabled=self.stage == 3):
                    param_ema.data.copy_((1 - beta) * param.data + beta * param_ema.data)


class ActorTrainer:
    def __init__(self, strategy: DeepspeedStrategy, actor, ema_actor, config):
        self.strategy = strategy
        self.actor = strategy.prepare(actor, config)
        self.ema_model = strategy.prepare(ema_actor, config) if ema_actor is not None else None

    def training_step(self, loss):
        self.actor.backward(loss)
        self.actor.step()
        if self.ema_model:
            self.strategy.moving_average(self.actor, self.ema_model)
