"""The same strategy object, but the EMA update is done by the first local process only (to save
its time on the others): ZeRO-3's GatheredParameters all-gathers the partitioned parameters, and
the other ranks never join it. The engine itself is alike everywhere; the rank test is what
differs."""
import os

import deepspeed


class DeepspeedStrategy:
    def __init__(self, stage: int):
        self.stage = stage
        self.local_rank = int(os.environ.get("LOCAL_RANK", "-1"))

    def prepare(self, model, config):
        engine, _, _, _ = deepspeed.initialize(
            model=model,
            config=config,
            args={"local_rank": self.local_rank},
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
        if self.ema_model and self.strategy.local_rank == 0:
            self.strategy.moving_average(self.actor, self.ema_model)  # expect: RC101
